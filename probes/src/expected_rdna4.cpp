// gfx12 (RDNA4) WMMA, 16x16x16 with f32 accumulators, wave32 and wave64: the layouts and targets are
// the atom module's (flashprobe/atoms/amd_layout.h GFX12_WMMA_Layout, targets.h).
// As AMD's Matrix Instruction Calculator states them: A/B hold k in runs of four,
// k = 8*(slot/4) + 4*(lane/16) + slot%4; the OCP fp8/bf8 forms, mixed A/B types included
// (GFX12_WMMA_8bit_Layout), k = 8*(lane/16) + slot. The absolute k order is the document's: D = A*B only shows which A slot meets which B slot.
#include <tuple>

#include "expected_common.h"
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::detail {

namespace {
template <int kWave, class L = atoms::GFX12_WMMA_Layout<kWave>>
AtomDesc gfx12(const std::string& name, ElemType in, ElemType in_b) {
  const int wave = kWave;
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = target_list(atoms::targets::kGfx12Wmma);
  d.m = L::M;
  d.n = L::N;
  d.k = L::K;
  d.a_type = in;
  d.b_type = in_b;
  d.c_type = ElemType::f32;
  d.wave = kWave;
  d.a_slots = L::kA;
  d.b_slots = L::kB;
  d.c_slots = L::kC;
  d.expected = layout_of<L>();
  d.source = {"AMD RDNA4 Instruction Set Architecture Reference Guide",
              "Wave Matrix Multiply Accumulate (WMMA): matrix layouts in VGPRs"};
  d.notes = wave == 32 ? "no replicated lanes; K split between lanes 0-15 (k 0-3, 8-11) and 16-31 (k 4-7, 12-15)"
                       : "no replicated lanes; lane group g of 16 holds k 4g..4g+3";
  if (in == ElemType::e4m3 || in == ElemType::e5m2) {
    const std::string types = in == in_b ? "OCP " + std::string(elem_name(in))
                                         : "OCP " + std::string(elem_name(in)) + " A, " + std::string(elem_name(in_b)) + " B";
    d.notes = types + (wave == 32 ? ", four per register; no replicated lanes; lanes 0-15 hold k 0-7, 16-31 k 8-15"
                                  : ", four per register; no replicated lanes; lane groups 0-3 hold k 0-3, 8-11, 4-7, 12-15");
  }
  return d;
}
template <int kWave, class L = atoms::GFX12_WMMA_Layout<kWave>>
AtomDesc gfx12(const std::string& name, ElemType in) {
  return gfx12<kWave, L>(name, in, in);
}
}  // namespace

void add_rdna4_atoms(std::vector<AtomDesc>& mma) {
  mma.push_back(gfx12<32>("GFX12_WMMA_16x16x16_F32F16_W32", ElemType::f16));
  mma.push_back(gfx12<32>("GFX12_WMMA_16x16x16_F32BF16_W32", ElemType::bf16));
  mma.push_back(gfx12<64>("GFX12_WMMA_16x16x16_F32F16_W64", ElemType::f16));
  mma.push_back(gfx12<64>("GFX12_WMMA_16x16x16_F32BF16_W64", ElemType::bf16));
  // The four 8-bit pairings (A type first, as in the mnemonic v_wmma_f32_16x16x16_fp8_bf8) share one layout.
  constexpr ElemType kE4m3 = ElemType::e4m3, kE5m2 = ElemType::e5m2;
  for (auto [suffix, a, b] : {std::tuple{"E4M3", kE4m3, kE4m3}, std::tuple{"E4M3E5M2", kE4m3, kE5m2},
                              std::tuple{"E5M2E4M3", kE5m2, kE4m3}, std::tuple{"E5M2", kE5m2, kE5m2}}) {
    const std::string name = std::string("GFX12_WMMA_16x16x16_F32") + suffix;
    mma.push_back(gfx12<32, atoms::GFX12_WMMA_8bit_Layout<32>>(name + "_W32", a, b));
    mma.push_back(gfx12<64, atoms::GFX12_WMMA_8bit_Layout<64>>(name + "_W64", a, b));
  }
}

}  // namespace flashprobe::probes::detail
