#include "flashprobe/kernels/runner.h"

#include <chrono>
#include <cstring>
#include <sstream>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "modified_inputs.h"

namespace flashprobe::kernels {
namespace {

#ifdef FP_HAVE_GPU_RUNTIME
void note_damage(RunResult& r, const char* name, const DeviceBuffer& b) {
  if (b.bytes() == 0 && !b.data()) return;
  if (auto d = b.guard_damage()) r.guard_damage.push_back(std::string(name) + ": " + d->describe());
}

void note_modified(RunResult& r, const char* name, const DeviceBuffer& b, const Tensor& host) {
  const auto now = b.download();
  if (auto m = describe_modified(name, now, host.bytes, dtype_size(host.dtype))) r.inputs_modified.push_back(*m);
}

DeviceBuffer upload(const std::vector<std::uint8_t>& bytes) {
  DeviceBuffer b(bytes.size());
  b.upload(std::span<const std::uint8_t>(bytes));
  return b;
}
#endif

}  // namespace

bool is_poison(const Tensor& t, std::int64_t i) {
  const std::size_t n = dtype_size(t.dtype);
  const std::uint8_t* p = t.bytes.data() + static_cast<std::size_t>(i) * n;
  for (std::size_t k = 0; k < n; ++k)
    if (p[k] != kPoisonByte) return false;
  return true;
}

std::int64_t count_unwritten_o(const AttnProblem& p, const Tensor& o, std::string* first) {
  const Strides s = p.o_strides();
  std::int64_t n = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x)
          if (is_poison(o, offset(s, b, i, h, x)) && n++ == 0 && first)
            *first = "o[b=" + std::to_string(b) + ",i=" + std::to_string(i) + ",h=" + std::to_string(h) +
                     ",x=" + std::to_string(x) + "]";
  return n;
}

std::int64_t count_unwritten_lse(const AttnProblem& p, const std::vector<float>& lse, std::string* first) {
  std::int64_t n = 0;
  for (std::size_t k = 0; k < lse.size(); ++k) {
    std::uint32_t bits;
    std::memcpy(&bits, &lse[k], 4);
    if (bits != 0xFFFFFFFFu) continue;
    if (n++ == 0 && first) {
      const auto idx = static_cast<std::int64_t>(k);
      *first = "lse[b=" + std::to_string(idx / (std::int64_t{p.hq} * p.sq)) + ",h=" + std::to_string((idx / p.sq) % p.hq) +
               ",i=" + std::to_string(idx % p.sq) + "]";
    }
  }
  return n;
}

std::string RunResult::describe() const {
  if (clean()) return "clean";
  std::ostringstream s;
  for (auto& g : guard_damage) s << "guard damage: " << g << "\n";
  for (auto& m : inputs_modified) s << "input modified: " << m << "\n";
  if (o_unwritten || lse_unwritten)
    s << "never written (still poison): " << o_unwritten << " O element(s), " << lse_unwritten
      << " LSE element(s); first " << first_unwritten << "\n";
  return s.str();
}

MaskInputs upload_mask_inputs(const AttnProblem& p) {
  MaskInputs m;
  if (!p.alibi_slopes.empty()) {
    const std::vector<float> s(p.alibi_slopes.begin(), p.alibi_slopes.end());
    m.alibi = DeviceBuffer(s.size() * sizeof(float));
    m.alibi.upload(s);
  }
  if (!p.seqlens_k.empty()) {
    m.seqlens = DeviceBuffer(p.seqlens_k.size() * sizeof(int));
    m.seqlens.upload(p.seqlens_k);
  }
  return m;
}

RunResult run_kernel(const KernelInfo& kernel, const AttnProblem& p, const AttnInputs& in, const RunOptions& opt) {
  require_valid(p);
  const DeviceInfo dev = require_device();
  if (opt.check_supported)
    if (Support s = kernel.supports(dev, p); !s) throw UsageError(kernel.name + " does not support " + p.id() + ": " + s.reason);
  if (in.q.dtype != p.dtype || in.q.size() < p.q_span() || in.k.size() < p.k_span() || in.v.size() < p.v_span())
    throw UsageError("inputs do not match the problem " + p.id() + " (dtype or element count)");
#ifndef FP_HAVE_GPU_RUNTIME
  (void)opt;
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
#else
  RunResult r;
  using clock = std::chrono::steady_clock;
  const auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  const auto t_up = clock::now();
  DeviceBuffer q = upload(in.q.bytes), k = upload(in.k.bytes), v = upload(in.v.bytes);
  DeviceBuffer o(static_cast<std::size_t>(p.o_span()) * dtype_size(p.out_dtype));
  DeviceBuffer lse(static_cast<std::size_t>(p.lse_size()) * sizeof(float));
  r.workspace_bytes = kernel.workspace_bytes(p);
  DeviceBuffer ws(r.workspace_bytes);
  const MaskInputs masks = upload_mask_inputs(p);
  o.poison();
  lse.poison();
  ws.poison();
  DeviceTensors t{q.data(), k.data(), v.data(), o.data(), lse.as<float>(), masks.alibi.as<const float>(),
                  masks.seqlens.as<const int>()};
  FP_CHECK(fp_rt::device_synchronize());  // the uploads and poison fills are done
  r.upload_s = since(t_up);
  const auto t_dev = clock::now();
  kernel.launch(p, t, r.workspace_bytes ? ws.data() : nullptr, nullptr);
  FP_CHECK_LAUNCH(kernel.name.c_str());
  FP_CHECK(fp_rt::device_synchronize());
  r.device_s = since(t_dev);
  const auto t_down = clock::now();

  r.out.o = Tensor(p.out_dtype, p.o_span());
  const auto ob = o.download();
  std::memcpy(r.out.o.bytes.data(), ob.data(), ob.size());
  r.out.lse = lse.download_as<float>();
  r.o_unwritten = count_unwritten_o(p, r.out.o, &r.first_unwritten);
  std::string first_lse;
  r.lse_unwritten = count_unwritten_lse(p, r.out.lse, &first_lse);
  if (r.first_unwritten.empty()) r.first_unwritten = first_lse;

  note_damage(r, "q", q);
  note_damage(r, "k", k);
  note_damage(r, "v", v);
  note_damage(r, "o", o);
  note_damage(r, "lse", lse);
  note_damage(r, "workspace", ws);
  if (masks.alibi.data()) note_damage(r, "alibi_slopes", masks.alibi);
  if (masks.seqlens.data()) note_damage(r, "seqlens_k", masks.seqlens);
  if (opt.check_inputs_unchanged) {
    note_modified(r, "q", q, in.q);
    note_modified(r, "k", k, in.k);
    note_modified(r, "v", v, in.v);
  }
  r.download_s = since(t_down);
  return r;
#endif
}

}  // namespace flashprobe::kernels
