#include "host_subject.h"

#include <cstring>
#include <stdexcept>

#include <memory>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/device_memory.h"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/case_arena.h"
#include "flashprobe/kernels/input_fill.h"
#include "flashprobe/gate/stand_in_device.h"
#include "flashprobe/oracle/reference.h"

namespace flashprobe::gate::testing {
namespace {

kernels::RunResult run_on_host(const AttnProblem& p, const AttnInputs& in, bool scale_long_rows) {
  const oracle::Reference ref = oracle::reference(p, in);
  kernels::RunResult r;
  r.out.o = Tensor(p.out_dtype, p.o_span());
  std::memset(r.out.o.bytes.data(), kPoisonByte, r.out.o.bytes.size());
  r.out.lse.assign(static_cast<std::size_t>(p.lse_size()), 0.f);
  const Strides os = p.o_strides();
  for (int b = 0; b < p.batch; ++b) {
    const int keys = p.seqlens_k.empty() ? p.sk : p.seqlens_k[static_cast<std::size_t>(b)];
    const double f = scale_long_rows && keys >= 2 ? 1.25 : 1.0;
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h) {
        for (int x = 0; x < p.dv; ++x) r.out.o.set(offset(os, b, i, h, x), f * ref.o[ref.o_index(p, b, i, h, x)]);
        r.out.lse[static_cast<std::size_t>((std::int64_t{b} * p.hq + h) * p.sq + i)] =
            static_cast<float>(ref.lse[ref.lse_index(p, b, h, i)]);
      }
  }
  r.o_unwritten = kernels::count_unwritten_o(p, r.out.o, &r.first_unwritten);
  r.lse_unwritten = kernels::count_unwritten_lse(p, r.out.lse, r.first_unwritten.empty() ? &r.first_unwritten : nullptr);
  return r;
}

// The arena stand-ins: a kernel that reads Q, K and V through the pointers, computes on the host and
// writes O and LSE through them (every launch, or the first only), run on a case arena over host
// memory whose fill is the host generator writing through the pointers (the device fill's bits).
void use_host_arena(Subject& s, bool writes_once) {
  auto launches = std::make_shared<int>(0);
  s.kernel.launch = [launches, writes_once](const AttnProblem& p, const kernels::DeviceTensors& t, void*, kernels::Stream) {
    if (writes_once && (*launches)++ > 0) return;
    AttnInputs in{Tensor(p.dtype, p.q_span()), Tensor(p.dtype, p.k_span()), Tensor(p.dtype, p.v_span())};
    std::memcpy(in.q.bytes.data(), t.q, in.q.bytes.size());
    std::memcpy(in.k.bytes.data(), t.k, in.k.bytes.size());
    std::memcpy(in.v.bytes.data(), t.v, in.v.bytes.size());
    const kernels::RunResult r = run_on_host(p, in, false);
    std::memcpy(t.o, r.out.o.bytes.data(), r.out.o.bytes.size());
    std::memcpy(t.lse, r.out.lse.data(), r.out.lse.size() * sizeof(float));
  };
  auto arena = std::make_shared<kernels::CaseArena>(host_memory());
  const DeviceInfo dev = s.dev;
  s.runner = "arena";
  s.run = [arena, dev](const kernels::KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
    return kernels::run_in_arena(*arena, k, dev, p, kernels::ArenaInputs::of(in)).run;
  };
  s.run_case = [arena, dev](const kernels::KernelInfo& k, const Case& c) {
    const AttnInputs want = c.make_inputs();
    kernels::ArenaRun r = kernels::run_in_arena(*arena, k, dev, c.problem, kernels::ArenaInputs::filled([&](void* q, void* kk, void* v) {
      std::memcpy(q, want.q.bytes.data(), want.q.bytes.size());
      std::memcpy(kk, want.k.bytes.data(), want.k.bytes.size());
      std::memcpy(v, want.v.bytes.data(), want.v.bytes.size());
    }));
    kernels::spot_check_counter_inputs(c.problem, c.seed, c.input_dist(), r.in);
    return CaseRun{std::move(r.in), std::move(r.run)};
  };
}

// Host memory whose "device" has 1 GiB free of 80: an allocation above that is the runtime's shortage.
class ShortMemory final : public DeviceMemory {
 public:
  void* allocate(std::size_t n) override {
    if (n > (std::size_t{1} << 30)) throw DeviceMemoryShortage("a device allocation of " + std::to_string(n) + " bytes", n, 1ULL << 30, 80ULL << 30);
    return host_->allocate(n);
  }
  void release(void* p) noexcept override { host_->release(p); }
  void* allocate_host(std::size_t n) override { return host_->allocate_host(n); }
  void release_host(void* p) noexcept override { host_->release_host(p); }
  void fill(void* d, std::uint8_t b, std::size_t n) override { host_->fill(d, b, n); }
  void to_device(void* d, const void* h, std::size_t n) override { host_->to_device(d, h, n); }
  void to_host(void* h, const void* d, std::size_t n) override { host_->to_host(h, d, n); }
  void synchronize() override {}
  bool on_gpu() const override { return false; }

 private:
  std::unique_ptr<DeviceMemory> host_ = host_memory();
};

}  // namespace

Subject host_subject(const std::string& name, const std::string& dtype) {
  if (name == "arena-correct" || name == "arena-writes-once") {
    Subject s = host_subject("correct", dtype);
    s.kernel.name = "host-" + name;
    s.kernel.description = "host stand-in on the case arena: " + name;
    s.ref = name;
    use_host_arena(s, name == "arena-writes-once");
    return s;
  }
  const bool scale = name == "scales-2-key-rows", refuse_all = name == "refuses-all",
             refuse_batches = name == "refuses-batches", launch_fails = name == "launch-fails",
             short_hold = name == "short-of-memory", short_runner = name == "runner-short-of-memory";
  if (!scale && !refuse_all && !refuse_batches && !launch_fails && !short_hold && !short_runner && name != "correct")
    throw UsageError("host stand-in '" + name +
                     "': allowed correct, scales-2-key-rows, refuses-all, refuses-batches, launch-fails, arena-correct, "
                     "arena-writes-once, short-of-memory, runner-short-of-memory");
  Subject s;
  s.kernel.name = "host-" + name;
  s.kernel.description = "host stand-in: " + name;
  s.kernel.supports = [refuse_all, refuse_batches](const DeviceInfo&, const AttnProblem& p) {
    if (auto v = kernels::Support::valid(p); !v) return v;
    if (refuse_all) return kernels::Support::no("d=" + std::to_string(p.d) + ": the stand-in refuses everything");
    if (refuse_batches && p.batch > 1) return kernels::Support::no("batch=" + std::to_string(p.batch) + ": the stand-in takes one batch element");
    return kernels::Support::yes();
  };
  s.kernel.workspace_bytes = [](const AttnProblem&) { return std::size_t{0}; };
  s.family = "host";
  s.kind = "host";
  s.ref = name;
  s.dev.name = "host (CPU stand-in)";
  s.dev.arch = "host";
  s.host = true;
  Domain& d = s.domain;
  d.head_dims = {16, 32};
  d.dtypes = {DType::f16, DType::bf16, DType::f32};
  d.tile_m = d.tile_n = 16;
  d.long_row_odds = 0;  // rows of thousands of keys cost the shared CI cores more than they test here
  d.tensor_layouts = true;
  const kernels::KernelInfo k = s.kernel;
  d.supports = [k](const AttnProblem& p) { return static_cast<bool>(k.supports(DeviceInfo{}, p)); };
  restrict_dtypes(d, dtype);
  s.run = [scale, launch_fails, short_runner](const kernels::KernelInfo& kk, const AttnProblem& p, const AttnInputs& in) {
    if (auto v = kk.supports(DeviceInfo{}, p); !v) throw UsageError(kk.name + " does not support " + p.id() + ": " + v.reason);
    // As a plug-in whose launch returns an error (Plugin::launch throws it): the cuDNN plug-in's
    // failed execute, for one.
    if (launch_fails) throw std::runtime_error("plug-in host-launch-fails launch failed: cudnnBackendExecute: CUDNN_STATUS_EXECUTION_FAILED");
    // As the runner's own guard-banded buffer when the device is full (fp_rt::device_malloc).
    if (short_runner) throw DeviceMemoryShortage("a guard-banded device buffer of 4096 bytes", 4096 + 2 * 4096, 0, 80ULL << 30);
    return run_on_host(p, in, scale);
  };
  if (short_hold) {
    // Its device is a stand-in H100 (stand_in_device.h: 80 GiB, so LargeOffsetsAgree is asked) whose
    // device memory has 1 GiB free: the property's hold cannot have its tensors.
    s.dev = stand_in_h100();
    auto m = std::make_shared<ShortMemory>();
    s.memory = m;
  }
  return s;
}

Resolver host_resolver() {
  return [](const SubjectRef& r, const std::string& dtype) {
    if (r.kind != "host") throw UsageError("a CPU test resolves host stand-ins only, not " + r.kind + "=" + r.ref);
    return host_subject(r.ref, dtype);
  };
}

}  // namespace flashprobe::gate::testing
