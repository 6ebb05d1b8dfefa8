#include "flashprobe/gate/subject.h"

#include "flashprobe/core/error.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/kernels/variants.h"
#include "flashprobe/proptests/generators.h"

namespace flashprobe::gate {

using kernels::KernelInfo;
using kernels::Support;

std::string Subject::display() const { return kind == "kernel" ? kernel.name : kind + " " + kernel.name + " (" + ref + ")"; }

void restrict_dtypes(Domain& d, const std::string& dtype) {
  if (dtype.empty()) return;
  d.dtypes = proptests::restrict_dtypes(d.dtypes, dtype.c_str());
}

namespace {
kernels::RunResult run_on_device(const KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
  return kernels::run_kernel(k, p, in, kernels::RunOptions{});
}
}  // namespace

Subject builtin_subject(const KernelInfo& k, const std::string& family, const DeviceInfo& dev, const std::string& dtype) {
  Subject s;
  s.kernel = k;
  s.family = family;
  s.kind = "kernel";
  s.ref = k.name;
  s.dev = dev;
  s.domain = kernel_domain(k, dev);
  // kernel_domain's predicate holds a reference to k: point it at the subject's own copy's twin.
  s.domain.supports = [k, dev](const AttnProblem& p) { return static_cast<bool>(k.supports(dev, p)); };
  restrict_dtypes(s.domain, dtype);
  s.run = run_on_device;
  if (const KernelInfo* d = kernels::find_kernel("decode")) s.decoder = *d;
  return s;
}

Subject builtin_subject(const std::string& name, const DeviceInfo& dev, const std::string& dtype) {
  const KernelInfo k = kernels::kernel_or_variant(name);
  return builtin_subject(k, name.substr(0, name.find('/')), dev, dtype);
}

Subject plugin_subject(const Plugin& plugin, const DeviceInfo& dev, const std::string& path, const std::string& dtype) {
  Subject s;
  s.kernel.name = plugin.name();
  s.kernel.description = plugin.description();
  s.kernel.supports = [plugin](const DeviceInfo&, const AttnProblem& p) {
    if (Support v = Support::valid(p); !v) return v;
    const std::string why = plugin.supports(p);
    return why.empty() ? Support::yes() : Support::no(why);
  };
  s.kernel.workspace_bytes = [](const AttnProblem&) { return std::size_t{0}; };
  s.kernel.launch = [plugin](const AttnProblem& p, const kernels::DeviceTensors& t, void*, kernels::Stream stream) {
    const fp_tensors_v1 c{t.q, t.k, t.v, t.o, t.lse, t.seqlens_k, t.alibi_slopes, static_cast<void*>(stream)};
    plugin.launch(p, c);
  };
  s.family = "plugin";
  s.kind = "plugin";
  s.ref = path;
  s.dev = dev;
  Domain& d = s.domain;
  d.head_dims = {64, 80, 96, 128, 256};
  d.any_head_dim = true;
  d.dv_differs = true;
  d.dtypes = {DType::f16, DType::bf16, DType::f32};
  d.long_row_odds = 10;
  d.tensor_layouts = true;
  const KernelInfo k = s.kernel;
  d.supports = [k, dev](const AttnProblem& p) { return static_cast<bool>(k.supports(dev, p)); };
  restrict_dtypes(d, dtype);
  s.run = run_on_device;
  return s;
}

}  // namespace flashprobe::gate
