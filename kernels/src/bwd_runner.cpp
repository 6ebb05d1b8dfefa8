// run_backward(): one backward kernel on one problem with the runner's checks (runner.h's, for gradients).
#include <cstring>
#include <sstream>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/runner.h"

namespace flashprobe::kernels {
namespace {

std::int64_t count_one(const char* name, const Tensor& t, const Strides& st, int B, int S, int H, int D, std::string* first) {
  std::int64_t n = 0;
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < H; ++h)
        for (int x = 0; x < D; ++x)
          if (is_poison(t, offset(st, b, s, h, x)) && n++ == 0 && first && first->empty())
            *first = std::string(name) + "[b=" + std::to_string(b) + ",s=" + std::to_string(s) + ",h=" + std::to_string(h) +
                     ",x=" + std::to_string(x) + "]";
  return n;
}

#ifdef FP_HAVE_GPU_RUNTIME
DeviceBuffer upload(const std::vector<std::uint8_t>& bytes) {
  DeviceBuffer b(bytes.size());
  b.upload(std::span<const std::uint8_t>(bytes));
  return b;
}
Tensor download(const DeviceBuffer& b, DType t) {
  Tensor r;
  r.dtype = t;
  r.bytes = b.download();
  return r;
}
#endif

}  // namespace

std::int64_t count_unwritten_grads(const AttnProblem& p, const Tensor& dq, const Tensor& dk, const Tensor& dv, std::string* first) {
  return count_one("dq", dq, p.q_strides(), p.batch, p.sq, p.hq, p.d, first) +
         count_one("dk", dk, p.k_strides(), p.batch, p.sk, p.hkv, p.d, first) +
         count_one("dv", dv, p.v_strides(), p.batch, p.sk, p.hkv, p.dv, first);
}

std::string BackwardRunResult::describe() const {
  if (clean()) return "clean";
  std::ostringstream s;
  for (auto& g : guard_damage) s << "guard damage: " << g << "\n";
  for (auto& m : inputs_modified) s << "input modified: " << m << "\n";
  if (unwritten) s << "never written (still poison): " << unwritten << " gradient element(s); first " << first_unwritten << "\n";
  return s.str();
}

BackwardRunResult run_backward(const BackwardKernelInfo& kernel, const AttnProblem& p, const AttnInputs& in,
                               const BackwardRunInputs& bw) {
  require_valid(p);
  const DeviceInfo dev = require_device();
  if (Support s = kernel.supports(dev, p); !s) throw UsageError(kernel.name + " does not support " + p.id() + ": " + s.reason);
  if (in.q.dtype != p.dtype || in.q.size() < p.q_span() || in.k.size() < p.k_span() || in.v.size() < p.v_span())
    throw UsageError("inputs do not match the problem " + p.id() + " (dtype or element count)");
  if (bw.dout.dtype != p.out_dtype || bw.dout.size() < p.o_span() || bw.o.dtype != p.out_dtype || bw.o.size() < p.o_span() ||
      static_cast<std::int64_t>(bw.lse.size()) != p.lse_size())
    throw UsageError("dO, O or LSE do not match the problem " + p.id() + " (out_dtype, element count, or LSE [B, Hq, Sq])");
#ifndef FP_HAVE_GPU_RUNTIME
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
#else
  BackwardRunResult r;
  DeviceBuffer q = upload(in.q.bytes), k = upload(in.k.bytes), v = upload(in.v.bytes);
  DeviceBuffer o = upload(bw.o.bytes), dout = upload(bw.dout.bytes);
  DeviceBuffer lse(bw.lse.size() * sizeof(float));
  lse.upload(bw.lse);
  const std::size_t es = dtype_size(p.dtype);
  DeviceBuffer dq(static_cast<std::size_t>(p.q_span()) * es), dk(static_cast<std::size_t>(p.k_span()) * es),
      dv(static_cast<std::size_t>(p.v_span()) * es);
  DeviceBuffer ws(kernel.workspace_bytes(p));
  const MaskInputs masks = upload_mask_inputs(p);
  dq.poison();
  dk.poison();
  dv.poison();
  ws.poison();
  BwdDeviceTensors t;
  t.fwd = {q.data(), k.data(), v.data(), o.data(), lse.as<float>(), masks.alibi.as<const float>(), masks.seqlens.as<const int>()};
  t.dout = dout.data();
  t.dq = dq.data();
  t.dk = dk.data();
  t.dv = dv.data();
  FP_CHECK(fp_rt::device_synchronize());
  kernel.launch(p, t, ws.bytes() ? ws.data() : nullptr, nullptr);
  FP_CHECK_LAUNCH(kernel.name.c_str());
  FP_CHECK(fp_rt::device_synchronize());
  r.dq = download(dq, p.dtype);
  r.dk = download(dk, p.dtype);
  r.dv = download(dv, p.dtype);
  r.unwritten = count_unwritten_grads(p, r.dq, r.dk, r.dv, &r.first_unwritten);
  const std::pair<const char*, const DeviceBuffer*> bufs[] = {
      {"q", &q}, {"k", &k}, {"v", &v}, {"o", &o}, {"lse", &lse}, {"dout", &dout}, {"dq", &dq}, {"dk", &dk}, {"dv", &dv},
      {"workspace", &ws}, {"alibi_slopes", &masks.alibi}, {"seqlens_k", &masks.seqlens}};
  for (auto [name, b] : bufs)
    if (b->data())
      if (auto d = b->guard_damage()) r.guard_damage.push_back(std::string(name) + ": " + d->describe());
  const std::pair<const char*, std::pair<const DeviceBuffer*, const std::vector<std::uint8_t>*>> inputs[] = {
      {"q", {&q, &in.q.bytes}}, {"k", {&k, &in.k.bytes}}, {"v", {&v, &in.v.bytes}}, {"o", {&o, &bw.o.bytes}},
      {"dout", {&dout, &bw.dout.bytes}}};
  for (auto [name, pr] : inputs)
    if (pr.first->download() != *pr.second) r.inputs_modified.push_back(std::string(name) + ": changed by the kernel");
  std::vector<float> lse_after = lse.download_as<float>();
  if (std::memcmp(lse_after.data(), bw.lse.data(), bw.lse.size() * sizeof(float)) != 0)
    r.inputs_modified.push_back("lse: changed by the kernel");
  return r;
#endif
}

}  // namespace flashprobe::kernels
