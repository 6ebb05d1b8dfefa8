#include "flashprobe/gate/kernel_domain.h"

#include <algorithm>
#include <stdexcept>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/mutant_catalogue.h"

namespace flashprobe::gate {

using kernels::KernelInfo;

namespace {
// The head dims a tensor-core kernel's gate draws (registry.h: tile classes): every class's d and
// dv (the specialised instantiations) first, then per class, in order of d, its narrowest d (one
// step past the next narrower class's) and, where the class spans more, the middle one (rounded to
// the step): 8, 16, 40, 48, 72, 88, 104, 112, 136, 144, 168, 176, 200, 224 for mma's fine ladder
// (136 and 192 for the coarse one's 256 class); for wgmma's 136 and 144 in its 160 class, 168 and
// 176 beside MLA's 192/128, 200 and 224 in its 256 class. d != dv draws dv from the first eight
// (draw_problem).
template <std::size_t N>
std::vector<int> tensor_core_dims(const kernels::HeadDimClass (&classes)[N]) {
  constexpr int step = kernels::kHeadDimStep;
  std::vector<int> v;
  const auto add = [&](int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const auto& c : classes) add(c.d);
  for (const auto& c : classes) add(c.dv);
  // (the list's order is the choice order, not d's: wgmma's 192/128 comes before 160/160)
  std::vector<int> widths;
  for (const auto& c : classes) widths.push_back(c.d);
  std::sort(widths.begin(), widths.end());
  int below = 0;
  for (int w : widths) {
    add(below + step);
    if (w - below > 2 * step) add((below + w) / 2 / step * step);
    below = w;
  }
  return v;
}

// The key-tile widths of a kernel's tile classes (`keys` of each): the first class's as tile_n, the
// others', each once, as more_tile_n, so that Sk is drawn at every class's tile edges.
template <std::size_t N, class Keys>
void set_key_tiles(Domain& d, const kernels::HeadDimClass (&classes)[N], Keys keys) {
  d.tile_n = keys(classes[0]);
  d.more_tile_n.clear();
  for (const auto& c : classes) {
    const int t = keys(c);
    if (t != d.tile_n && std::find(d.more_tile_n.begin(), d.more_tile_n.end(), t) == d.more_tile_n.end())
      d.more_tile_n.push_back(t);
  }
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
    // (wgmma/classes=fine: kWgmmaFineDimClasses, with 96/96 and 224/224; kernels::wgmma_class) Its
    // tiles are its classes' (head_dim_classes.h): 128 query rows, 128 or 64 keys.
    const bool fine = n.find("classes=fine") != std::string::npos;
    d.head_dims = fine ? tensor_core_dims(kernels::kWgmmaFineDimClasses) : tensor_core_dims(kernels::kWgmmaDimClasses);
    d.dv_differs = true;
    d.tile_m = kernels::kWgmmaBlockRows;
    if (fine) set_key_tiles(d, kernels::kWgmmaFineDimClasses, kernels::wgmma_tile_keys);
    else set_key_tiles(d, kernels::kWgmmaDimClasses, kernels::wgmma_tile_keys);
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

namespace {
template <std::size_t N>
std::vector<kernels::HeadDimClass> class_list(const kernels::HeadDimClass (&classes)[N]) {
  return std::vector<kernels::HeadDimClass>(std::begin(classes), std::end(classes));
}
}  // namespace

std::vector<KernelPath> kernel_paths(const KernelInfo& k, const DeviceInfo& dev) {
  if (k.name == "decode")
    return {{"plan half (one-row blocks)", [](const AttnProblem& p) { return kernels::decode_plan_half(p); }},
            {"plan full (several-row blocks)", [](const AttnProblem& p) { return !kernels::decode_plan_half(p); }}};
  const bool amd = dev.vendor == "amd";
  std::vector<kernels::HeadDimClass> classes;
  std::function<kernels::HeadDimClass(const AttnProblem&)> class_of;
  if (k.name == "mma" || k.name == "mma/classes=coarse") {
    const bool coarse = amd || k.name != "mma";
    classes = coarse ? class_list(kernels::kMmaDimClasses) : class_list(kernels::kMmaFineDimClasses);
    class_of = [coarse, amd](const AttnProblem& p) {
      const bool extras = p.softcap > 0 || !p.alibi_slopes.empty();
      return amd ? kernels::head_dim_class(kernels::kMmaDimClasses, p.d, p.dv) : kernels::mma_nvidia_class(p.d, p.dv, extras, coarse);
    };
  } else if (k.name == "wgmma" || k.name == "wgmma/classes=fine") {
    const bool fine = k.name != "wgmma";
    classes = fine ? class_list(kernels::kWgmmaFineDimClasses) : class_list(kernels::kWgmmaDimClasses);
    class_of = [fine](const AttnProblem& p) { return kernels::wgmma_class(p.d, p.dv, fine); };
  } else {
    return {};
  }
  std::vector<KernelPath> paths;
  for (const kernels::HeadDimClass& c : classes) {
    AttnProblem own;
    own.batch = own.hq = own.hkv = 1;
    own.sq = own.sk = 128;
    own.d = c.d;
    own.dv = c.dv;
    if (!k.supports(dev, own)) continue;  // not a class of this device (mma's 80 on CDNA)
    paths.push_back({"class " + std::to_string(c.d) + "/" + std::to_string(c.dv),
                     [c, class_of](const AttnProblem& p) { return class_of(p) == c; }});
  }
  return paths;
}

}  // namespace flashprobe::gate
