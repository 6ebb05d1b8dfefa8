#include "src/mma/mma_bwd_amd_plan.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"
#include "src/mma/mma_amd_plan.h"

namespace flashprobe::kernels {

AmdBwdPlan amd_bwd_plan(const AttnProblem& p, const std::string& family) {
  if (p.d != p.dv) throw UsageError("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": mma_bwd_amd needs d == dv");
  if (std::find(std::begin(kAmdBwdDims), std::end(kAmdBwdDims), p.d) == std::end(kAmdBwdDims))
    throw UsageError("d=" + std::to_string(p.d) + ": mma_bwd_amd is built for d in {64, 128}");
  if (p.out_dtype != p.dtype) throw UsageError("mma_bwd_amd: out_dtype must equal dtype (dO feeds the matrix unit)");
  const AmdMmaPlan fwd = amd_mma_plan(p, family);  // the atom of the family and dtype, as the forward's
  AmdBwdPlan plan;
  plan.atom = fwd.atom;
  plan.elem = fwd.elem;
  plan.wave_size = fwd.wave_size;
  plan.d = p.d;
  plan.tile = amd_bwd_tile(p.d);
  plan.waves = kAmdBwdBlock / (family == "cdna" ? atoms::CDNA_MFMA_32x32x8_Layout::M : atoms::GFX11_WMMA_16x16x16_Layout::M);
  plan.threads = plan.waves * plan.wave_size;
  const auto blocks = [](std::int64_t n, int per) { return static_cast<unsigned>((n + per - 1) / per); };
  plan.grid_rowdot = {blocks(std::int64_t{p.batch} * p.hq * p.sq, kAmdBwdRowdotThreads), 1, 1};
  plan.grid_dkdv = {blocks(p.sk, kAmdBwdBlock), static_cast<unsigned>(p.hkv), static_cast<unsigned>(p.batch)};
  plan.grid_dq = {blocks(p.sq, kAmdBwdBlock), static_cast<unsigned>(p.hq), static_cast<unsigned>(p.batch)};
  // Placeholders (distinct, aligned, never dereferenced on the host): the harness writes the real
  // addresses at pointer_offsets.
  const auto at = [](std::uintptr_t a) { return reinterpret_cast<void*>(a); };
  BwdDeviceTensors t;
  t.fwd.q = at(0x1000);
  t.fwd.k = at(0x2000);
  t.fwd.v = at(0x3000);
  t.fwd.o = at(0x4000);
  t.fwd.lse = static_cast<float*>(at(0x5000));
  if (!p.alibi_slopes.empty()) t.fwd.alibi_slopes = static_cast<const float*>(at(0x6000));
  if (!p.seqlens_k.empty()) t.fwd.seqlens_k = static_cast<const int*>(at(0x7000));
  t.dout = at(0x8000);
  t.dq = at(0x9000);
  t.dk = at(0xa000);
  t.dv = at(0xb000);
  std::memset(static_cast<void*>(&plan.params), 0, sizeof(BwdParams));
  const BwdParams made = make_bwd_params(p, t, at(0xc000), true);
  std::memcpy(static_cast<void*>(&plan.params), &made, sizeof(BwdParams));
  const std::size_t f = offsetof(BwdParams, f);
  plan.pointer_offsets = {f + offsetof(Params, q),      f + offsetof(Params, k),    f + offsetof(Params, v),
                          f + offsetof(Params, o),      f + offsetof(Params, lse),  f + offsetof(Params, alibi),
                          f + offsetof(Params, seqlens), offsetof(BwdParams, dout), offsetof(BwdParams, dq),
                          offsetof(BwdParams, dk),      offsetof(BwdParams, dv),    offsetof(BwdParams, dvec)};
  return plan;
}

}  // namespace flashprobe::kernels
