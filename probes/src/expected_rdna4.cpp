// gfx12 (RDNA4) WMMA, 16x16x16 with f32 accumulators, wave32 and wave64: the layouts and targets are
// the atom module's (flashprobe/atoms/amd_layout.h GFX12_WMMA_Layout, targets.h).
// As AMD's Matrix Instruction Calculator states them: A/B hold k in runs of four,
// k = 8*(slot/4) + 4*(lane/16) + slot%4. The absolute k order is the document's: D = A*B only shows which A slot meets which B slot.
#include "expected_common.h"
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::detail {

namespace {
template <int kWave>
AtomDesc gfx12(const std::string& name, ElemType in) {
  using L = atoms::GFX12_WMMA_Layout<kWave>;
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
  return d;
}
}  // namespace

void add_rdna4_atoms(std::vector<AtomDesc>& mma) {
  mma.push_back(gfx12<32>("GFX12_WMMA_16x16x16_F32F16_W32", ElemType::f16));
  mma.push_back(gfx12<32>("GFX12_WMMA_16x16x16_F32BF16_W32", ElemType::bf16));
  mma.push_back(gfx12<64>("GFX12_WMMA_16x16x16_F32F16_W64", ElemType::f16));
  mma.push_back(gfx12<64>("GFX12_WMMA_16x16x16_F32BF16_W64", ElemType::bf16));
}

}  // namespace flashprobe::probes::detail
