#include "flashprobe/kernels/params.h"

#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"

namespace flashprobe::kernels {
namespace {
DevStrides dev_strides(const Strides& s) { return {s.b, s.s, s.h, s.d}; }

// Rows of a 16-bit tensor start 16-byte aligned and are contiguous (Params::*_rows16).
bool rows16(const Strides& s, DType t, const void* base, int batch, int heads) {
  const auto mult8 = [](std::int64_t x) { return x % 8 == 0; };
  return dtype_size(t) == 2 && s.d == 1 && mult8(s.s) && (batch == 1 || mult8(s.b)) && (heads == 1 || mult8(s.h)) &&
         (reinterpret_cast<std::uintptr_t>(base) & 15) == 0;
}
}  // namespace

Params make_params(const AttnProblem& p, const DeviceTensors& t) {
  require_valid(p);
  if (!p.alibi_slopes.empty() && !t.alibi_slopes)
    throw UsageError("the problem has ALiBi slopes but DeviceTensors::alibi_slopes is null: upload the " +
                     std::to_string(p.alibi_slopes.size()) + " slopes as f32");
  if (p.alibi_slopes.empty() && t.alibi_slopes)
    throw UsageError("DeviceTensors::alibi_slopes is set but the problem has no ALiBi slopes");
  if (!p.seqlens_k.empty() && !t.seqlens_k)
    throw UsageError("the problem has per-batch key lengths (seqlens_k) but DeviceTensors::seqlens_k is null");
  if (p.seqlens_k.empty() && t.seqlens_k)
    throw UsageError("DeviceTensors::seqlens_k is set but the problem has no per-batch key lengths");
  Params r{};
  r.q = t.q;
  r.k = t.k;
  r.v = t.v;
  r.o = t.o;
  r.lse = t.lse;
  r.qs = dev_strides(p.q_strides());
  r.ks = dev_strides(p.k_strides());
  r.vs = dev_strides(p.v_strides());
  r.os = dev_strides(p.o_strides());
  r.batch = p.batch;
  r.hq = p.hq;
  r.hkv = p.hkv;
  r.group = p.group();
  r.sq = p.sq;
  r.sk = p.sk;
  r.d = p.d;
  r.dv = p.dv;
  r.kv_offset = p.kv_offset;
  r.scale = static_cast<float>(p.effective_scale());
  r.softcap = static_cast<float>(p.softcap);
  r.causal = static_cast<CausalMode>(static_cast<int>(p.causal));
  r.window_left = p.window_left;
  r.window_right = p.window_right;
  r.alibi = p.alibi_slopes.empty() ? nullptr : t.alibi_slopes;
  r.seqlens = p.seqlens_k.empty() ? nullptr : t.seqlens_k;
  r.dtype = p.dtype;
  r.out_dtype = p.out_dtype;
  r.q_rows16 = p.d % 8 == 0 && rows16(p.q_strides(), p.dtype, t.q, p.batch, p.hq);
  r.kv_rows16 = p.d % 8 == 0 && p.dv % 8 == 0 && rows16(p.k_strides(), p.dtype, t.k, p.batch, p.hkv) &&
                rows16(p.v_strides(), p.dtype, t.v, p.batch, p.hkv);
  r.o_rows16 = p.dv % 8 == 0 && p.out_dtype == p.dtype && rows16(p.o_strides(), p.out_dtype, t.o, p.batch, p.hq);
  return r;
}

static_assert(static_cast<int>(Causal::none) == static_cast<int>(CausalMode::none) &&
                  static_cast<int>(Causal::bottom_right) == static_cast<int>(CausalMode::bottom_right) &&
                  static_cast<int>(Causal::top_left) == static_cast<int>(CausalMode::top_left),
              "CausalMode mirrors flashprobe::Causal");

}  // namespace flashprobe::kernels
