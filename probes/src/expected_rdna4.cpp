// gfx12 (RDNA4) WMMA, 16x16x16 with f32 accumulators, wave32 and wave64: the layouts and targets are
// the atom module's (flashprobe/atoms/amd_layout.h GFX12_WMMA_Layout, targets.h).
// Cross-checked against CK ck_tile WmmaTraits<gfx12> (wave32: kABKLane = 2, kABK1PerLane = 8,
// kCM1PerLane = 8). The wave64 forms come from a third-party reading of the ISA and are flagged so.
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
  d.notes = wave == 32 ? "no replicated lanes; K split between lanes 0-15 and 16-31"
                       : "wave64 layout from a third-party reading of the ISA; not yet checked against the ISA text";
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
