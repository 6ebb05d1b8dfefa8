// The wgmma kernel's registry entry: which devices and problems it takes (pure host code, in every
// build) and its launch, present only in the cuda backend, where wgmma_launch.cu is built as sm_90a
// code (FLASHPROBE_HAVE_WGMMA).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/registry.h"
#include "src/launchers.h"
#include "src/variant_makers.h"
#include "src/wgmma/wgmma_launchers.h"
#include "src/wgmma/wgmma_mask.h"

namespace flashprobe::kernels {

namespace {

// The TMA reads rows at 16-byte granularity: the dims must be contiguous and every other stride a
// multiple of kWgmmaStrideAlign elements (16 bytes).
std::string tma_stride_problem(const char* what, const Strides& st) {
  if (st.d != 1) return std::string(what) + " stride d=" + std::to_string(st.d) + ": the TMA needs contiguous dims (d stride 1)";
  for (std::int64_t x : {st.s, st.h, st.b})
    if (x % kWgmmaStrideAlign != 0 || x < 0)
      return std::string(what) + " strides (s=" + std::to_string(st.s) + ", h=" + std::to_string(st.h) + ", b=" +
             std::to_string(st.b) + "): the TMA needs non-negative multiples of " + std::to_string(kWgmmaStrideAlign) +
             " elements (16 bytes)";
  return {};
}

// fine_classes: the variant wgmma/classes=fine (kWgmmaFineDimClasses).
Support wgmma_supports(const DeviceInfo& dev, const AttnProblem& p, bool fine_classes = false) {
  if (Support v = Support::valid(p); !v) return v;
  if (detail::nvidia_sm(dev) != 90)
    return Support::no("arch=" + (dev.arch.empty() ? std::string("none") : dev.arch) +
                       ": wgmma and the TMA path exist on sm_90 (Hopper) only");
  if (p.dtype == DType::f32) return Support::no("dtype=f32: wgmma reads f16 or bf16 inputs");
  if (p.sk == 0) return Support::no("sk=0: no keys for the TMA to address (mma writes the empty rows)");
  if (!wgmma_class(p.d, p.dv, fine_classes))
    return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": " + detail::wgmma_dims_rule(fine_classes));
  for (auto [what, st] : {std::pair{"q", p.q_strides()}, std::pair{"k", p.k_strides()}, std::pair{"v", p.v_strides()}})
    if (auto why = tma_stride_problem(what, st); !why.empty()) return Support::no(why);
  if (p.hq > kMaxGridYZ || p.batch > kMaxGridYZ)
    return Support::no("hq=" + std::to_string(p.hq) + ", batch=" + std::to_string(p.batch) + " exceed the grid limit " +
                       std::to_string(kMaxGridYZ));
  const std::int64_t items = detail::wgmma_work_items(p, fine_classes);
  if (items > INT32_MAX)
    return Support::no("sq=" + std::to_string(p.sq) + ", hq=" + std::to_string(p.hq) + ", batch=" + std::to_string(p.batch) +
                       ": " + std::to_string(items) + " work items (128-row blocks, paired under a causal mask) exceed " +
                       "the kernel's 32-bit count " + std::to_string(INT32_MAX));
#if !defined(FLASHPROBE_HAVE_WGMMA)
  return Support::no("this build has no sm_90a code (wgmma is built in the cuda backend only)");
#else
  return Support::yes();
#endif
}

// wgmma/carry=on, wgmma/l2ahead=on, wgmma/epilogue=pairs and wgmma/mask=visible (named `variant`): built for the 64/64 and 128/128 tile
// classes without soft-cap or ALiBi (wgmma_launch.cu); wgmma/align=sector also for 160/160 and 256/256
// (wgmma_launch_d160.cu, wgmma_launch_d256.cu), not 192/128; the rest of their domain is wgmma's.
Support wgmma_class_variant_supports(const std::string& variant, const DeviceInfo& dev, const AttnProblem& p) {
  if (Support v = Support::valid(p); !v) return v;
  const bool wide = variant == "wgmma/align=sector";
  const int c = head_dim_class(kWgmmaDimClasses, p.d, p.dv).d;
  if (c != 64 && c != 128 && !(wide && (c == 160 || c == 256)))
    return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": " + variant +
                       (wide ? " is built for the 64/64, 128/128, 160/160 and 256/256 tile classes only (not 192/128)"
                             : " is built for the 64/64 and 128/128 tile classes only (d and dv up to 128)"));
  if (wide && (c == 64 || c == 128) && !dev::affine_mask_fits(p.sq, p.sk))
    return Support::no("sq=" + std::to_string(p.sq) + ", sk=" + std::to_string(p.sk) + ": " + variant +
                       " is built with the affine mask at the 64/64 and 128/128 classes (sq + sk at most " +
                       std::to_string(kMaxLen32) + ")");
  if (p.softcap > 0 || !p.alibi_slopes.empty())
    return Support::no("softcap/ALiBi: " + variant + " is built without the score transforms");
  return wgmma_supports(dev, p);
}

// wgmma/stages=<n>: built for the 64/64 class without soft-cap or ALiBi, with the affine mask (rows and
// keys in 32 bits); the rest of its domain is wgmma's.
Support wgmma_stages_supports(const std::string& variant, const DeviceInfo& dev, const AttnProblem& p) {
  if (Support v = Support::valid(p); !v) return v;
  if (head_dim_class(kWgmmaDimClasses, p.d, p.dv).d != 64)
    return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": " + variant +
                       " is built for the 64/64 tile class only (d and dv up to 64)");
  if (p.softcap > 0 || !p.alibi_slopes.empty())
    return Support::no("softcap/ALiBi: " + variant + " is built without the score transforms");
  if (!dev::affine_mask_fits(p.sq, p.sk))
    return Support::no("sq=" + std::to_string(p.sq) + ", sk=" + std::to_string(p.sk) + ": " + variant +
                       " is built with the affine mask only (sq + sk at most " + std::to_string(kMaxLen32) + ")");
  return wgmma_supports(dev, p);
}

}  // namespace

KernelInfo make_wgmma(std::string name, std::string description, const detail::WgmmaOptions& o) {
  std::function<Support(const DeviceInfo&, const AttnProblem&)> supports = [](const DeviceInfo& dev, const AttnProblem& p) {
    return wgmma_supports(dev, p);
  };
  if (o.fine_classes)
    supports = [](const DeviceInfo& dev, const AttnProblem& p) { return wgmma_supports(dev, p, true); };
  if (o.carry || o.l2ahead || o.pair_stores || o.visible_mask || o.align_rows) {
    const std::string variant = o.carry         ? "wgmma/carry=on"
                                : o.l2ahead     ? "wgmma/l2ahead=on"
                                : o.pair_stores ? "wgmma/epilogue=pairs"
                                : o.visible_mask ? "wgmma/mask=visible"
                                                : "wgmma/align=sector";
    supports = [variant](const DeviceInfo& dev, const AttnProblem& p) { return wgmma_class_variant_supports(variant, dev, p); };
  }
  if (o.stages > 0) {
    const std::string variant = "wgmma/stages=" + std::to_string(o.stages);
    supports = [variant](const DeviceInfo& dev, const AttnProblem& p) { return wgmma_stages_supports(variant, dev, p); };
  }
  return {std::move(name), std::move(description), std::move(supports),
          [](const AttnProblem&) { return std::size_t{0}; },
          [o](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
            (void)ws;
#if defined(FLASHPROBE_HAVE_WGMMA)
            detail::launch_wgmma(make_params(p, t), s, o);
#else
            (void)p, (void)t, (void)s, (void)o;
            throw NoDevice("this build has no sm_90a code: wgmma cannot launch");
#endif
          }};
}

KernelInfo make_wgmma_kernel() {
  return make_wgmma("wgmma",
                    "Hopper FlashAttention: wgmma m64nNk16 fed by TMA tile loads (sm_90a), a producer and two consumer "
                    "warpgroups of 64 query rows, persistent over 128-row blocks; f16/bf16, d and dv multiples of 8 in "
                    "the tile classes " + detail::wgmma_class_names() + " (d/dv)",
                    {});
}

KernelInfo wgmma_with_blocks(int blocks) {
  if (blocks < 1) throw UsageError("wgmma blocks=" + std::to_string(blocks) + " is not allowed: use >= 1");
  detail::WgmmaOptions o;
  o.max_blocks = blocks;
  return make_wgmma("wgmma/blocks=" + std::to_string(blocks),
                    "wgmma on a persistent grid of at most " + std::to_string(blocks) + " block(s) (tests)", o);
}

}  // namespace flashprobe::kernels
