#include "bench/bench_backward.h"

#include <algorithm>

#include "bench/random_tiled.h"
#include "flashprobe/core/buffer.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/kernels/select.h"

namespace flashprobe::bench {

BackwardTiming time_backward(const kernels::BackwardKernelInfo& k, const BenchCase& c, const std::string& timing,
                             double min_seconds) {
  const AttnProblem& p = c.p;
  const auto up = [](const std::vector<std::uint8_t>& host) {
    DeviceBuffer b(host.size());
    b.upload(host);
    return b;
  };
  DeviceBuffer q = up(random_tiled(p.dtype, p.q_span(), 1000)), kk = up(random_tiled(p.dtype, p.k_span(), 1001)),
               v = up(random_tiled(p.dtype, p.v_span(), 1002)), dout = up(random_tiled(p.out_dtype, p.o_span(), 1003));
  DeviceBuffer o(static_cast<std::size_t>(p.o_span()) * dtype_size(p.out_dtype));
  DeviceBuffer lse(static_cast<std::size_t>(p.lse_size()) * sizeof(float));
  o.fill_byte(0);
  lse.fill_byte(0);
  const kernels::MaskInputs masks = kernels::upload_mask_inputs(p);
  const kernels::DeviceTensors fwd{q.data(), kk.data(), v.data(), o.data(), lse.as<float>(),
                                   masks.alibi.as<const float>(), masks.seqlens.as<const int>()};
  BackwardTiming r;
  const kernels::Selection f = kernels::select(require_device(), p);
  if (f) {
    DeviceBuffer ws(std::max<std::size_t>(f.kernel->workspace_bytes(p), 16));
    f.kernel->launch(p, fwd, ws.data(), nullptr);
#ifdef FP_HAVE_GPU_RUNTIME
    FP_CHECK(fp_rt::device_synchronize());
#endif
    r.forward_by = f.kernel->name;
  }
  const std::size_t es = dtype_size(p.dtype);
  DeviceBuffer dq(static_cast<std::size_t>(p.q_span()) * es), dk(static_cast<std::size_t>(p.k_span()) * es),
      dv(static_cast<std::size_t>(p.v_span()) * es), ws(std::max<std::size_t>(k.workspace_bytes(p), 16));
  kernels::BwdDeviceTensors t;
  t.fwd = fwd;
  t.dout = dout.data();
  t.dq = dq.data();
  t.dk = dk.data();
  t.dv = dv.data();
  const auto launch = [&](int, kernels::Stream s) { k.launch(p, t, ws.data(), s); };
  r.t = timing == "graph" ? time_graph(launch, 1, 3, 10, 200, min_seconds)
                          : time_device([&](int) { launch(0, nullptr); }, 3, 10, 200, min_seconds);
  return r;
}

}  // namespace flashprobe::bench
