#include "flashprobe/kernels/select.h"

#include <algorithm>
#include <sstream>
#include <string>

namespace flashprobe::kernels {
namespace {

[[maybe_unused]] std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ';' || c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// "sm_90" -> 90; -1 when not an sm_NN name.
int sm_number(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return -1;
  try {
    return std::stoi(arch.substr(3));
  } catch (...) {
    return -1;
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The tile class a tensor-core path runs (d, dv) in (registry.h: head_dim_class): "; d=128, dv=128:
// its own tile class (128/128)" or "; d=40, dv=40 in the 64/64 tile class, columns past d and dv
// zero padding".
std::string tile_class_note(const HeadDimClass c, const AttnProblem& p, const char* general) {
  if (!c) return {};
  const std::string name = std::to_string(c.d) + "/" + std::to_string(c.dv);
  const std::string dims = "d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv);
  if (c == HeadDimClass{p.d, p.dv}) return "; " + dims + ": its own tile class (" + name + ")";
  return "; " + dims + " in the " + name + " tile class" + general + ", columns past d and dv zero padding";
}

}  // namespace

BinaryTargets binary_targets() {
#if defined(FLASHPROBE_KERNEL_VENDOR) && defined(FLASHPROBE_KERNEL_ARCHS)
  return {FLASHPROBE_KERNEL_VENDOR, split_list(FLASHPROBE_KERNEL_ARCHS)};
#else
  return {};
#endif
}

std::string binary_runs_on(const BinaryTargets& bin, const DeviceInfo& dev) {
  if (bin.vendor.empty()) return "this binary has no GPU code (built with FLASHPROBE_GPU=off)";
  if (dev.arch.empty()) return "no GPU device";
  if (dev.vendor != bin.vendor)
    return "the binary has " + bin.vendor + " code (" + join(bin.archs) + ") but the device is " +
           (dev.vendor.empty() ? std::string("of unknown vendor") : dev.vendor) + " " + dev.arch;
  if (bin.vendor == "amd") {
    for (auto& a : bin.archs)
      if (a == dev.arch) return {};
    return "no code object for " + dev.arch + " in this binary (it has " + join(bin.archs) +
           "); rebuild with -DGPU_TARGETS=" + dev.arch;
  }
  const int dev_sm = sm_number(dev.arch);
  if (dev_sm < 0) return "device arch '" + dev.arch + "' is not an sm_NN name";
  for (auto& a : bin.archs) {
    const bool real_only = a.ends_with("-real"), virtual_only = a.ends_with("-virtual");
    int n = -1;
    try {
      n = std::stoi(a);
    } catch (...) {
      continue;
    }
    // SASS for sm_N runs on the same major version with an equal or newer minor.
    if (!virtual_only && n / 10 == dev_sm / 10 && dev_sm >= n) return {};
    // PTX for compute_N is JIT-compiled by the driver for any newer architecture.
    if (!real_only && dev_sm >= n) return {};
  }
  return "no code for " + dev.arch + " in this binary (it has CUDA architectures " + join(bin.archs) +
         "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(dev_sm);
}

// Whether decode goes before mma, and why. mma, the tensor-core path, is preferred wherever it supports the problem, except for a handful of query rows (sq <= kDecodeMaxSq): it runs
// one block per (query tile, head, batch), while decode splits the keys across blocks and reads them
// with 16-byte loads. Measured on an H100 (reports/data/h100-80gb-hbm3/2026-11-23-decode2, d = 128,
// 32 heads, Sk 1k-32k): at sq = 1 decode moves 866-2856 GB/s at batch 1 (mma 169-203) and
// 2157-3041 at batch 8 (mma 1177-1462). For 1 < sq <= kDecodeMaxSq only the under-filled case
// (batch * hq blocks below the SM count) is decode's; the rest is unmeasured and stays with mma.
bool decode_first(const DeviceInfo& dev, const AttnProblem& p, std::string* why) {
  if (p.sq > kDecodeMaxSq) return false;
  const long long blocks = static_cast<long long>(p.batch) * p.hq;
  const bool underfilled = dev.multiprocessors <= 0 || blocks < dev.multiprocessors;
  if (why) {
    *why = "sq=" + std::to_string(p.sq) + " <= " + std::to_string(kDecodeMaxSq) + ": keys split across blocks, " +
           (p.sq == 1 ? std::string("one query row (decode measured ahead of the tensor-core path at any batch)")
                      : "batch*hq=" + std::to_string(blocks) + " blocks under " + std::to_string(dev.multiprocessors) + " SMs");
  }
  return p.sq == 1 || underfilled;
}

// The Hopper path (wgmma + TMA, sm_90 only: elsewhere its supports() refuses and mma follows) goes
// first for every prefill: it ran 1.2x or more ahead of mma on every prefill shape of the grid
// (reports/data/h100-80gb-hbm3/2026-11-24-final/) but the shortest causal d = 64 ones, where mma led
// until wgmma's affine mask (2e70c62): timed in one call (2026-11-27-vs-cudnn-708f029/, f16 and bf16,
// mma timed first), wgmma with it / mma at causal d = 64 S = 512 1.06-1.08x, S = 1024 1.15-1.16x,
// d = 64 S = 512 1.13-1.16x, causal d = 128 S = 512 1.35-1.38x.
// Per tile class: every wgmma class measured ahead of mma over its head dims (H100, bf16, B 4 H 16
// S 4096, causal and not): 64/64 0.96-1.44x against mma's 64 class, 128/128 1.11-2.04x, 192/128
// 2.33-3.05x, 160/160 1.43-2.29x, 256/256 1.88-2.60x
// (reports/data/h100-80gb-hbm3/2026-11-27-wgmma-classes-708f029/), so the class alone sends no problem
// to mma first; the reason names the class (wgmma_class_note). A class added to kWgmmaDimClasses
// without such a measurement must go to mma first here until it has one.
// But mma's own 32/32 class (d, dv <= 32 without soft-cap or ALiBi; wgmma runs those in its 64/64
// class, every k-step of S) ran 1.11-1.35x wgmma at d = dv = 8..32, causal and not, timed in one
// call (H100, bf16, B 4 H 16 S 4096: reports/data/h100-80gb-hbm3/2026-11-27-headdim-smalld-06a5a85/),
// so the problems of that class go to mma first (mma_small_class_first).
bool mma_small_class_first(const DeviceInfo& dev, const AttnProblem& p, std::string* why) {
  if (dev.vendor != "nvidia") return false;
  const HeadDimClass c = mma_nvidia_class(p.d, p.dv, p.softcap != 0.f || !p.alibi_slopes.empty(), false);
  const bool first = c == kMmaFineDimClasses[0];
  if (first && why)
    *why = "d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": mma's " + std::to_string(c.d) + "/" +
           std::to_string(c.dv) + " class measured 1.11-1.35x wgmma's 64/64 at d = 8..32 (H100, "
           "reports/data/h100-80gb-hbm3/2026-11-27-headdim-smalld-06a5a85)";
  return first;
}

const std::vector<std::string>& preference_order(const DeviceInfo& dev, const AttnProblem& p) {
  static const std::vector<std::string> prefill{"wgmma", "mma", "decode", "tiled", "ref3pass"};
  static const std::vector<std::string> small_prefill{"mma", "wgmma", "decode", "tiled", "ref3pass"};
  static const std::vector<std::string> few_rows{"decode", "mma", "tiled", "ref3pass"};
  if (decode_first(dev, p, nullptr)) return few_rows;
  return mma_small_class_first(dev, p, nullptr) ? small_prefill : prefill;
}

std::string Selection::describe() const {
  std::ostringstream s;
  s << (kernel ? kernel->name + ": " : std::string("none: ")) << reason;
  for (auto& r : rejected) s << "\n  not " << r.kernel << ": " << r.reason;
  return s.str();
}

Selection select(const DeviceInfo& dev, const AttnProblem& p) { return select(dev, p, binary_targets(), kernels()); }

Selection select(const DeviceInfo& dev, const AttnProblem& p, const BinaryTargets& bin,
                 const std::vector<KernelInfo>& table) {
  Selection sel;
  if (auto why = binary_runs_on(bin, dev); !why.empty()) {
    sel.reason = why;
    return sel;
  }
  for (auto& name : preference_order(dev, p)) {
    const KernelInfo* k = nullptr;
    for (auto& e : table)
      if (e.name == name) k = &e;
    if (!k) {
      sel.rejected.push_back({name, "not in this build"});
      continue;
    }
    if (Support s = k->supports(dev, p); !s) {
      sel.rejected.push_back({name, s.reason});
      continue;
    }
    sel.kernel = k;
    if (name == "mma") {
      sel.reason = "tensor-core path supports the problem on " + dev.arch;
      if (std::string why; sm_number(dev.arch) == 90 && mma_small_class_first(dev, p, &why)) sel.reason += " (" + why + ")";
      if (dev.vendor == "nvidia") sel.reason += tile_class_note(mma_nvidia_class(p.d, p.dv, p.softcap != 0.f || !p.alibi_slopes.empty(), false), p, " (the general instantiation)");
    }
    else if (name == "wgmma") {
      const HeadDimClass c = wgmma_class(p.d, p.dv, false);
      sel.reason = "Hopper path (wgmma + TMA) supports the problem on " + dev.arch + tile_class_note(c, p, "");
      if (c.d > 128 && c.dv > 128)  // the classes past 128 on both sides (preference_order's comment)
        sel.reason += " (wgmma's " + std::to_string(c.d) + "/" + std::to_string(c.dv) +
                      " class measured 1.4-2.6x mma over its head dims: H100, reports/data/h100-80gb-hbm3/"
                      "2026-11-27-wgmma-classes-708f029)";
    }
    else if (name == "decode") {
      if (!decode_first(dev, p, &sel.reason)) sel.reason = "the tensor-core path does not support the problem";
    }
    else if (name == "tiled") sel.reason = "d=" + std::to_string(p.d) + ", " + std::string(dtype_name(p.dtype)) + ": scalar FlashAttention-2";
    else if (name == "ref3pass") sel.reason = "fallback: no faster path supports the problem";
    else sel.reason = "first supported kernel in the order of preference";
    return sel;
  }
  sel.reason = "no kernel supports the problem";
  return sel;
}

}  // namespace flashprobe::kernels
