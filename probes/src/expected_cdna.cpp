// CDNA (gfx908/gfx90a/gfx942) MFMA, wave64. Inputs: lane l holds row (A) / column (B) l % dim with
// K split between the 64/dim lane groups: k = (K*dim/64)*(l / dim) + slot. Accumulators:
//   32x32: row = (slot & 3) + 8*(slot >> 2) + 4*(lane >> 5), col = lane & 31   (16 slots)
//   16x16: row = slot + 4*(lane >> 4),                         col = lane & 15   (4 slots)
// The bf16_1k forms (gfx90a+) use the f16 layouts; gfx942's 16x16x32 fp8 holds 8 k per lane.
// Cross-checked against the AMD Matrix Instruction Calculator's --register-layout output rules.
#include "expected_common.h"

namespace flashprobe::probes::detail {

namespace {
AtomDesc mfma(const std::string& name, std::vector<std::string> targets, int dim, int k, ElemType in,
              const std::string& instr) {
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = std::move(targets);
  d.m = d.n = dim;
  d.k = k;
  d.a_type = d.b_type = in;
  d.c_type = ElemType::f32;
  d.wave = 64;
  const int per = k * dim / 64;  // k per lane
  d.a_slots = d.b_slots = per;
  d.c_slots = dim * dim / 64;
  auto a = OperandLayout::from_function(dim, k, 64, per, [=](int lane, int s) { return Coord{lane % dim, per * (lane / dim) + s}; });
  auto b = OperandLayout::from_function(k, dim, 64, per, [=](int lane, int s) { return Coord{per * (lane / dim) + s, lane % dim}; });
  auto c = OperandLayout::from_function(dim, dim, 64, d.c_slots, [=](int lane, int s) {
    return dim == 32 ? Coord{(s & 3) + 8 * (s >> 2) + 4 * (lane >> 5), lane & 31} : Coord{s + 4 * (lane >> 4), lane & 15};
  });
  d.expected = MmaLayout{a, b, c};
  d.source = {"AMD Instinct MI300 / MI200 Instruction Set Architecture Reference Guides",
              "Matrix Arithmetic Instructions (MFMA): dependent register layouts; AMD Matrix Instruction Calculator"};
  d.notes = instr;
  return d;
}
}  // namespace

void add_cdna_atoms(std::vector<AtomDesc>& mma) {
  mma.push_back(mfma("CDNA_MFMA_32x32x8_F32F16", {"gfx908", "gfx90a", "gfx942"}, 32, 8, ElemType::f16,
                     "v_mfma_f32_32x32x8f16 (gfx908/gfx90a), v_mfma_f32_32x32x8_f16 (gfx942)"));
  mma.push_back(mfma("CDNA_MFMA_16x16x16_F32F16", {"gfx908", "gfx90a", "gfx942"}, 16, 16, ElemType::f16,
                     "v_mfma_f32_16x16x16f16 (gfx908/gfx90a), v_mfma_f32_16x16x16_f16 (gfx942)"));
  mma.push_back(mfma("CDNA_MFMA_32x32x8_F32BF16_1K", {"gfx90a", "gfx942"}, 32, 8, ElemType::bf16,
                     "v_mfma_f32_32x32x8bf16_1k (gfx90a), v_mfma_f32_32x32x8_bf16 (gfx942)"));
  mma.push_back(mfma("CDNA_MFMA_16x16x16_F32BF16_1K", {"gfx90a", "gfx942"}, 16, 16, ElemType::bf16,
                     "v_mfma_f32_16x16x16bf16_1k (gfx90a), v_mfma_f32_16x16x16_bf16 (gfx942)"));
  mma.push_back(mfma("CDNA_MFMA_16x16x32_F32E4M3", {"gfx942"}, 16, 32, ElemType::e4m3,
                     "v_mfma_f32_16x16x32_fp8_fp8 (gfx942; OCP e4m3 on gfx950, FNUZ e4m3 on gfx942: values used "
                     "by the probe are exact in both)"));
}

}  // namespace flashprobe::probes::detail
