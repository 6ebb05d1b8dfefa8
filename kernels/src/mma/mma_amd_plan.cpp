#include "src/mma/mma_amd_plan.h"

#include <cstdint>
#include <cstring>

#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"
#include "src/mma/mma_order.h"
#include "src/mma/mma_rescale.h"

namespace flashprobe::kernels {

AmdMmaPlan amd_mma_plan(const AttnProblem& p, const std::string& family) {
  AmdMmaPlan plan;
  const bool bf16 = p.dtype == DType::bf16;
  if (p.dtype != DType::f16 && !bf16) throw UsageError("mma: dtype must be f16 or bf16");
  if (p.d != 64 && p.d != 80 && p.d != 96 && p.d != 128 && p.d != 256)
    throw UsageError("mma: d=" + std::to_string(p.d) + " (allowed: 64, 80, 96, 128, 256)");
  if (family == "gfx11") {
    plan.atom = bf16 ? "GFX11_WMMA_16x16x16_F32BF16_W32" : "GFX11_WMMA_16x16x16_F32F16_W32";
    plan.wave_size = 32;
  } else if (family == "gfx12") {
    plan.atom = bf16 ? "GFX12_WMMA_16x16x16_F32BF16_W32" : "GFX12_WMMA_16x16x16_F32F16_W32";
    plan.wave_size = 32;
  } else if (family == "cdna") {
    if (p.d % 32 != 0) throw UsageError("d=" + std::to_string(p.d) + ": the CDNA mma kernel needs d % 32 == 0 (MFMA 32x32x8)");
    plan.atom = bf16 ? "CDNA_MFMA_32x32x8_F32BF16_1K" : "CDNA_MFMA_32x32x8_F32F16";
    plan.wave_size = 64;
  } else {
    throw UsageError("family '" + family + "' (allowed: gfx11, gfx12, cdna)");
  }
  plan.elem = bf16 ? "BF16" : "F16";
  plan.d = p.d;
  plan.bn = amd_mma_bn(p.d);
  plan.threads = plan.waves * plan.wave_size;
  // One m-tile of the atom's M query rows per wave (mma_default_mt is 1 on AMD).
  const int rows = plan.waves * (family == "cdna" ? atoms::CDNA_MFMA_32x32x8_Layout::M : atoms::GFX11_WMMA_16x16x16_Layout::M);
  const int nm = (p.sq + rows - 1) / rows;
  const dev::MmaOrder order = dev::mma_order(p.causal != Causal::none, nm);
  const dev::MmaGrid g = dev::mma_grid(order, nm, p.hq, p.batch);
  plan.grid = {g.x, g.y, g.z};
  plan.order = static_cast<int>(order);
  plan.rescale_log2 = dev::mma_rescale_log2();
  // Placeholders (distinct, aligned, never dereferenced on the host): the harness writes the real
  // addresses at pointer_offsets.
  DeviceTensors t;
  t.q = reinterpret_cast<const void*>(std::uintptr_t{0x1000});
  t.k = reinterpret_cast<const void*>(std::uintptr_t{0x2000});
  t.v = reinterpret_cast<const void*>(std::uintptr_t{0x3000});
  t.o = reinterpret_cast<void*>(std::uintptr_t{0x4000});
  t.lse = reinterpret_cast<float*>(std::uintptr_t{0x5000});
  if (!p.alibi_slopes.empty()) t.alibi_slopes = reinterpret_cast<const float*>(std::uintptr_t{0x6000});
  if (!p.seqlens_k.empty()) t.seqlens_k = reinterpret_cast<const int*>(std::uintptr_t{0x7000});
  std::memset(static_cast<void*>(&plan.params), 0, sizeof(Params));
  const Params made = make_params(p, t);
  std::memcpy(static_cast<void*>(&plan.params), &made, sizeof(Params));
  plan.pointer_offsets = {offsetof(Params, q), offsetof(Params, k), offsetof(Params, v), offsetof(Params, o),
                          offsetof(Params, lse), offsetof(Params, alibi), offsetof(Params, seqlens)};
  return plan;
}

}  // namespace flashprobe::kernels
