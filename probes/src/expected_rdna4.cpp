// gfx12 (RDNA4) WMMA, 16x16x16 with f32 accumulators, wave32 and wave64: the layouts and targets are
// the atom module's (flashprobe/atoms/amd_layout.h GFX12_WMMA_Layout, targets.h).
// As AMD's Matrix Instruction Calculator states them: A/B hold k in runs of four,
// k = 8*(slot/4) + 4*(lane/16) + slot%4; the OCP fp8 forms (GFX12_WMMA_8bit_Layout) k = 8*(lane/16) + slot. The absolute k order is the document's: D = A*B only shows which A slot meets which B slot.
#include "expected_common.h"
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::detail {

namespace {
template <int kWave, class L = atoms::GFX12_WMMA_Layout<kWave>>
AtomDesc gfx12(const std::string& name, ElemType in) {
  const int wave = kWave;
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = target_list(atoms::targets::kGfx12Wmma);
  d.m = L::M;
  d.n = L::N;
  d.k = L::K;
  d.a_type = d.b_type = in;
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
  if (in == ElemType::e4m3)
    d.notes = wave == 32 ? "OCP e4m3, four per register; no replicated lanes; lanes 0-15 hold k 0-7, 16-31 k 8-15"
                         : "OCP e4m3, four per register; no replicated lanes; lane groups 0-3 hold k 0-3, 8-11, 4-7, 12-15";
  return d;
}
}  // namespace

void add_rdna4_atoms(std::vector<AtomDesc>& mma) {
  mma.push_back(gfx12<32>("GFX12_WMMA_16x16x16_F32F16_W32", ElemType::f16));
  mma.push_back(gfx12<32>("GFX12_WMMA_16x16x16_F32BF16_W32", ElemType::bf16));
  mma.push_back(gfx12<64>("GFX12_WMMA_16x16x16_F32F16_W64", ElemType::f16));
  mma.push_back(gfx12<64>("GFX12_WMMA_16x16x16_F32BF16_W64", ElemType::bf16));
  mma.push_back(gfx12<32, atoms::GFX12_WMMA_8bit_Layout<32>>("GFX12_WMMA_16x16x16_F32E4M3_W32", ElemType::e4m3));
  mma.push_back(gfx12<64, atoms::GFX12_WMMA_8bit_Layout<64>>("GFX12_WMMA_16x16x16_F32E4M3_W64", ElemType::e4m3));
}

}  // namespace flashprobe::probes::detail
