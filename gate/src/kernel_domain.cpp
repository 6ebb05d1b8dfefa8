#include "flashprobe/gate/kernel_domain.h"

#include <algorithm>
#include <stdexcept>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/mutant_catalogue.h"

namespace flashprobe::gate {

using kernels::KernelInfo;

namespace {
// The head dims a tensor-core kernel's gate draws (registry.h: tile classes): every class's d and
// dv (the specialised instantiations) first, then per class its narrowest d (one step past the
// class below) and, where the class spans more, the middle one (rounded to the step): 8, 32, 72,
// 88, 104, 112, 136, 144, 168, 176, 200, 224 for mma's fine ladder (136 and 192 for the coarse
// one's 256 class). d != dv draws dv from the first eight (draw_problem).
template <std::size_t N>
std::vector<int> tensor_core_dims(const kernels::HeadDimClass (&classes)[N]) {
  constexpr int step = kernels::kHeadDimStep;
  std::vector<int> v;
  const auto add = [&](int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const auto& c : classes) add(c.d);
  for (const auto& c : classes) add(c.dv);
  int below = 0;
  for (const auto& c : classes) {
    add(below + step);
    if (c.d - below > 2 * step) add((below + c.d) / 2 / step * step);
    below = c.d;
  }
  return v;
}
}  // namespace

Domain kernel_domain(const KernelInfo& k, const DeviceInfo& dev) {
  Domain d;
  // The family: a mutant's production kernel (the catalogue's), "decode/splits=3" is decode.
  std::string n = k.name;
  if (n.rfind("mutant/", 0) == 0) {
    const std::string m = n.substr(7, n.find('/', 7) == std::string::npos ? std::string::npos : n.find('/', 7) - 7);
    if (const kernels::MutantMeta* meta = kernels::find_mutant_meta(m)) n = meta->kernel;
  }
  const std::string base = n.substr(0, n.find('/'));
  if (base == "decode") {
    d.any_head_dim = true;
    d.dv_differs = true;
    d.max_sq = kernels::kDecodeMaxSq;
    d.tile_m = kernels::kDecodeMaxSq;
  } else if (base == "ref3pass") {
    d.any_head_dim = true;
    d.dv_differs = true;
    d.dtypes = {DType::f16, DType::bf16, DType::f32};
    d.tile_m = 16;
  } else if (base == "wgmma") {
    // (wgmma/classes=fine: kWgmmaFineDimClasses, with 96/96; kernels::wgmma_class)
    d.head_dims = n.find("classes=fine") != std::string::npos ? tensor_core_dims(kernels::kWgmmaFineDimClasses)
                                                              : tensor_core_dims(kernels::kWgmmaDimClasses);
    d.dv_differs = true;
    d.tile_m = 128;  // Hopper path: 128 query rows and 128 keys per tile
    d.tile_n = 128;  // (the 256/256 class's 64-key tiles end there too)
    d.stride_align = kernels::kWgmmaStrideAlign;  // padded rows it takes (its TMA's 16 bytes)
  } else if (base == "mma") {
    // (mma runs the fine ladder on NVIDIA, kMmaDimClasses on AMD and as mma/classes=coarse: a ladder's
    // classes and the dims between them are drawn; kernels::mma_nvidia_class)
    const bool coarse = n.find("classes=coarse") != std::string::npos || dev.vendor == "amd";
    d.head_dims = coarse ? tensor_core_dims(kernels::kMmaDimClasses) : tensor_core_dims(kernels::kMmaFineDimClasses);
    // mma/small=...: its own code runs only below the first class (src/mma/mma_small.h), so every
    // head dim there is drawn (and the class itself, mma's code).
    if (n.find("small=") != std::string::npos) {
      d.head_dims.clear();
      for (int x = kernels::kHeadDimStep; x <= kernels::kMmaDimClasses[0].d; x += kernels::kHeadDimStep) d.head_dims.push_back(x);
    }
    d.dv_differs = true;
    d.tile_m = 64;
    d.tile_n = 64;
  } else {
    d.head_dims = {64, 80, 96, 128, 256};
    d.tile_m = 64;
    d.tile_n = 64;
  }
  // What the gate adds to the plain generator: long rows (O or row sums accumulated in fp16 show
  // over thousands of keys), a layout per tensor (a kernel reading V with K's strides), and for
  // split-K kernels a forced split count per case.
  d.long_row_odds = 10;
  d.tensor_layouts = true;
  d.key_splits = static_cast<bool>(k.with_splits);
  d.supports = [&k, dev](const AttnProblem& p) { return static_cast<bool>(k.supports(dev, p)); };
  return d;
}

AttnProblem probe_problem(const Domain& d) {
  if (d.head_dims.empty()) throw UsageError("the domain lists no head dim (head_dims is empty)");
  if (d.dtypes.empty()) throw UsageError("the domain lists no dtype (dtypes is empty)");
  AttnProblem p;
  p.batch = p.hq = p.hkv = 1;
  p.sq = std::max(1, std::min(128, d.max_sq));
  p.sk = std::max(1, std::min(128, d.max_sk));
  p.d = p.dv = d.head_dims.front();
  p.dtype = p.out_dtype = d.dtypes.front();
  return p;
}

std::string device_refusal(const KernelInfo& k, const DeviceInfo& dev, int samples) {
  Domain d = kernel_domain(k, dev);
  const AttnProblem probe = probe_problem(d);
  const kernels::Support s = k.supports(dev, probe);
  if (s) return {};
  // Is it the device? The domain's problems, drawn without the kernel's predicate: one it accepts
  // here means the probe was refused for what it is, not for where it runs.
  d.supports = nullptr;
  for (int i = 0; i < samples; ++i) {
    const Case c = proptests::generate_case(d, static_cast<std::uint64_t>(i));
    if (k.supports(dev, c.problem))
      throw std::logic_error(k.name + " refuses its probe problem " + probe.id() + " on " + dev.arch + " (" + s.reason +
                             ") but accepts " + c.problem.id() + " of its domain: the probe is wrong, the skip would hide its suite");
  }
  return s.reason;
}

}  // namespace flashprobe::gate
