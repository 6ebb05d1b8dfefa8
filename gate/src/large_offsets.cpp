#include "flashprobe/gate/large_offsets.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/device_memory.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/input_fill.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/device_hold.h"
#include "flashprobe/gate/time_ledger.h"

namespace flashprobe::gate {

using kernels::KernelInfo;

namespace {

std::size_t widest(const Domain& d) {
  std::size_t w = 2;
  for (DType t : d.dtypes) w = std::max(w, dtype_size(t));
  return w;
}

std::int64_t tensor_bytes(std::size_t elem) { return (kLargeBatchStride + kLargeBatchElems) * static_cast<std::int64_t>(elem); }

// The four tensors (Q, K, V, O) of the run under way, held by hold_large_offsets for the whole run;
// uninitialised outside the rows a case writes (a correct kernel never reads there).
DeviceHold* g_held = nullptr;

}  // namespace

std::int64_t large_offsets_bytes(const Subject& s) { return 4 * tensor_bytes(widest(s.domain)); }

std::string large_offsets_refusal(const Subject& s) {
  const std::int64_t need = large_offsets_bytes(s), slack = std::int64_t{2} << 30;
  if (s.dev.global_mem_bytes >= need + slack) return {};
  return "device memory " + std::to_string(s.dev.global_mem_bytes >> 20) + " MiB: LargeOffsetsAgree needs " +
         std::to_string((need + slack) >> 20) + " MiB (four tensors of 2^31 elements and a margin)";
}

std::shared_ptr<void> hold_large_offsets(const Subject& s) {
  if (g_held) throw std::logic_error("LargeOffsetsAgree: a second run while one holds the buffers");
  const std::size_t bytes = static_cast<std::size_t>(tensor_bytes(widest(s.domain)));
  HoldRequest r;
  for (const char* t : {"Q", "K", "V", "O"}) r.buffers.push_back({std::string("LargeOffsetsAgree's ") + t + " tensor", bytes});
  r.lock_path = device_lock_path(s.dev.index);
  r.wait_s = device_wait_seconds();
  std::unique_ptr<DeviceHold> h = hold_device_buffers(s.memory ? s.memory : std::shared_ptr<DeviceMemory>(gpu_memory()), r);
  if (h->waited_s >= 1)
    std::fprintf(stderr, "LargeOffsetsAgree: waited %.1f s for the device's lock and memory (%s)\n", h->waited_s, r.lock_path.c_str());
  g_held = h.get();
  return std::shared_ptr<void>(h.release(), [](void* p) {
    g_held = nullptr;
    delete static_cast<DeviceHold*>(p);
  });
}

void prop_large_offsets_agree(const Subject& s) {
  Domain d = s.domain;
  d.max_batch = 1;    // the second batch element is the first one's copy in shape, far away
  d.strides = false;  // the property sets the strides
  d.long_row_odds = 0;
  Case c = draw_case(d);
  c.problem.batch = 2;
  if (!c.problem.seqlens_k.empty()) c.problem.seqlens_k.push_back(c.problem.seqlens_k.front());
  const AttnProblem& small = c.problem;  // contiguous BSHD: the oracle's copy
  RC_TAG(dtype_name(small.dtype));
  AttnProblem big = small;
  const auto bshd = [](int heads, int dim) { return Strides{kLargeBatchStride, std::int64_t{heads} * dim, dim, 1}; };
  big.q = bshd(small.hq, small.d);
  big.k = bshd(small.hkv, small.d);
  big.v = bshd(small.hkv, small.dv);
  big.o = bshd(small.hq, small.dv);
  const std::int64_t per_q = std::int64_t{small.sq} * small.hq * small.d, per_k = std::int64_t{small.sk} * small.hkv * small.d,
                     per_v = std::int64_t{small.sk} * small.hkv * small.dv, per_o = std::int64_t{small.sq} * small.hq * small.dv;
  RC_PRE(std::max({per_q, per_k, per_v, per_o}) <= kLargeBatchElems);
  RC_PRE(static_cast<bool>(s.kernel.supports(s.dev, big)));
  const KernelInfo kc = as_drawn(s.kernel, c);
  const AttnInputs in = [&] {
    const Timed t(Phase::inputs);
    return kernels::device_counter_inputs(c.problem, c.seed, c.input_dist());  // Case::make_inputs' bits
  }();
#ifndef FP_HAVE_GPU_RUNTIME
  (void)in, (void)kc;
  throw NoDevice("no GPU device: this build has no GPU backend");
#else
  const std::size_t es = dtype_size(small.dtype), eo = dtype_size(small.out_dtype);
  AttnOutputs out{Tensor(small.out_dtype, small.o_span()), std::vector<float>(static_cast<std::size_t>(small.lse_size()))};
  {
    const Timed timed(Phase::kernel);
    if (!g_held) throw std::logic_error("LargeOffsetsAgree ran without its buffers (the engine holds them: hold_large_offsets)");
    const std::vector<void*>& big_t = g_held->buffers;
    const auto base = [&](int i) { return static_cast<std::uint8_t*>(big_t[static_cast<std::size_t>(i)]); };
    // Batch element b of a compact tensor (per elements each) goes to element b * kLargeBatchStride.
    const auto put = [&](int i, const Tensor& src, std::int64_t per) {
      for (int b = 0; b < 2; ++b)
        FP_CHECK(fp_rt::memcpy_h2d(base(i) + b * kLargeBatchStride * static_cast<std::int64_t>(es),
                                   src.bytes.data() + b * per * static_cast<std::int64_t>(es), static_cast<std::size_t>(per) * es));
    };
    put(0, in.q, per_q);
    put(1, in.k, per_k);
    put(2, in.v, per_v);
    for (int b = 0; b < 2; ++b)
      FP_CHECK(fp_rt::memset(base(3) + b * kLargeBatchStride * static_cast<std::int64_t>(eo), kPoisonByte,
                             static_cast<std::size_t>(per_o) * eo));
    DeviceBuffer lse(static_cast<std::size_t>(small.lse_size()) * sizeof(float));
    lse.poison();
    const std::size_t ws_bytes = kc.workspace_bytes(big);
    DeviceBuffer ws(ws_bytes);
    const kernels::MaskInputs masks = kernels::upload_mask_inputs(big);
    const kernels::DeviceTensors t{big_t[0], big_t[1], big_t[2], big_t[3], lse.as<float>(), masks.alibi.as<const float>(),
                                   masks.seqlens.as<const int>()};
    FP_CHECK(fp_rt::device_synchronize());
    kc.launch(big, t, ws_bytes ? ws.data() : nullptr, nullptr);
    FP_CHECK_LAUNCH(kc.name.c_str());
    FP_CHECK(fp_rt::device_synchronize());
    for (int b = 0; b < 2; ++b)
      FP_CHECK(fp_rt::memcpy_d2h(out.o.bytes.data() + b * per_o * static_cast<std::int64_t>(eo),
                                 base(3) + b * kLargeBatchStride * static_cast<std::int64_t>(eo), static_cast<std::size_t>(per_o) * eo));
    out.lse = lse.download_as<float>();
    if (lse.guard_damage()) RC_FAIL(c.id() + ": LSE guard bands damaged with batch offsets past 2^31 elements");
  }
  const std::int64_t unwritten = kernels::count_unwritten_o(small, out.o) + kernels::count_unwritten_lse(small, out.lse);
  if (unwritten) RC_FAIL(c.id() + ": " + std::to_string(unwritten) + " output element(s) never written with batch offsets past 2^31 elements");
  const oracle::CheckResult chk = [&] {
    const Timed t(Phase::oracle);
    return oracle::check(small, in, out, check_options(small));
  }();
  if (!chk.pass) RC_FAIL(c.id() + " with batch strides of " + std::to_string(kLargeBatchStride) + " elements: " + chk.summary());
#endif
}

}  // namespace flashprobe::gate
