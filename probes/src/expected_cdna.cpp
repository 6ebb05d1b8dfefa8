// CDNA MFMA, wave64 (gfx908 and later): the layouts and targets are the atom module's
// (flashprobe/atoms/amd_layout.h CDNA_MFMA_Layout, targets.h). The bf16_1k forms (gfx90a+) use the
// f16 layouts; the fp8/bf8 forms (16x16x32, 32x32x16, mixed A/B types included) hold 8 k per lane. Cross-checked against the AMD Matrix
// Instruction Calculator's --register-layout output rules.
#include <optional>
#include <tuple>

#include "expected_common.h"
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::detail {

namespace {
template <int kDim, int kK>
AtomDesc mfma(const std::string& name, std::vector<std::string> targets, ElemType in, const std::string& instr,
              std::optional<ElemType> in_b = std::nullopt) {
  using L = atoms::CDNA_MFMA_Layout<kDim, kK>;
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = std::move(targets);
  d.m = L::M;
  d.n = L::N;
  d.k = L::K;
  d.a_type = in;
  d.b_type = in_b.value_or(in);
  d.c_type = ElemType::f32;
  d.wave = L::kWave;
  d.a_slots = L::kA;
  d.b_slots = L::kB;
  d.c_slots = L::kC;
  d.expected = layout_of<L>();
  d.source = {"AMD Instinct MI300 / MI200 Instruction Set Architecture Reference Guides",
              "Matrix Arithmetic Instructions (MFMA): dependent register layouts; AMD Matrix Instruction Calculator"};
  d.notes = instr;
  return d;
}
}  // namespace

void add_cdna_atoms(std::vector<AtomDesc>& mma) {
  mma.push_back(mfma<32, 8>("CDNA_MFMA_32x32x8_F32F16", target_list(atoms::targets::kCdnaMfmaF16), ElemType::f16,
                     "v_mfma_f32_32x32x8f16 (gfx908/gfx90a), v_mfma_f32_32x32x8_f16 (gfx942)"));
  mma.push_back(mfma<16, 16>("CDNA_MFMA_16x16x16_F32F16", target_list(atoms::targets::kCdnaMfmaF16), ElemType::f16,
                     "v_mfma_f32_16x16x16f16 (gfx908/gfx90a), v_mfma_f32_16x16x16_f16 (gfx942)"));
  mma.push_back(mfma<32, 8>("CDNA_MFMA_32x32x8_F32BF16_1K", target_list(atoms::targets::kCdnaMfmaBf16_1k), ElemType::bf16,
                     "v_mfma_f32_32x32x8bf16_1k (gfx90a), v_mfma_f32_32x32x8_bf16 (gfx942)"));
  mma.push_back(mfma<16, 16>("CDNA_MFMA_16x16x16_F32BF16_1K", target_list(atoms::targets::kCdnaMfmaBf16_1k), ElemType::bf16,
                     "v_mfma_f32_16x16x16bf16_1k (gfx90a), v_mfma_f32_16x16x16_bf16 (gfx942)"));
  mma.push_back(mfma<16, 32>("CDNA_MFMA_16x16x32_F32E4M3", target_list(atoms::targets::kCdnaMfmaFp8Fnuz), ElemType::e4m3,
                     "v_mfma_f32_16x16x32_fp8_fp8 (gfx940/941/942, FNUZ e4m3; gfx950 reads OCP e4m3: values used "
                     "by the probe are exact in both)"));
  mma.push_back(mfma<32, 16>("CDNA_MFMA_32x32x16_F32E4M3", target_list(atoms::targets::kCdnaMfmaFp8Fnuz), ElemType::e4m3,
                     "v_mfma_f32_32x32x16_fp8_fp8 (gfx940/941/942, FNUZ e4m3)"));
  // bf8 (FNUZ e5m2) and the mixed forms: the fp8 forms' layouts; A's type first, as in the mnemonic.
  // The engine's e4m3/e5m2 are the OCP formats: every value the probe sends is exact in FNUZ too.
  constexpr ElemType kE4m3 = ElemType::e4m3, kE5m2 = ElemType::e5m2;
  for (auto [suffix, instr, a, b] :
       {std::tuple{"E4M3E5M2", "fp8_bf8", kE4m3, kE5m2}, std::tuple{"E5M2E4M3", "bf8_fp8", kE5m2, kE4m3},
        std::tuple{"E5M2", "bf8_bf8", kE5m2, kE5m2}}) {
    const std::string tail = std::string(instr) + " (gfx940/941/942, FNUZ " + (a == kE4m3 ? "e4m3" : "e5m2") + " A, " +
                             (b == kE4m3 ? "e4m3" : "e5m2") + " B)";
    mma.push_back(mfma<16, 32>(std::string("CDNA_MFMA_16x16x32_F32") + suffix, target_list(atoms::targets::kCdnaMfmaFp8Fnuz),
                               a, "v_mfma_f32_16x16x32_" + tail, b));
    mma.push_back(mfma<32, 16>(std::string("CDNA_MFMA_32x32x16_F32") + suffix, target_list(atoms::targets::kCdnaMfmaFp8Fnuz),
                               a, "v_mfma_f32_32x32x16_" + tail, b));
  }
}

}  // namespace flashprobe::probes::detail
