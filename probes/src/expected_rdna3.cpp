// gfx11 (RDNA3) WMMA, 16x16x16, wave32 and wave64, f32 and 16-bit (OPSEL) accumulators: the layouts
// and targets are the atom module's (flashprobe/atoms/amd_layout.h GFX11_WMMA_Layout, targets.h).
// Cross-checked against: CK ck_tile WmmaTraits<gfx11> (wave32), GPUOpen "How to accelerate AI
// applications on RDNA 3 using WMMA" (wave32). The wave64 forms follow the same rule with 4 lane
// groups; that reading has not been checked against the ISA text (see the notes of each atom).
#include "expected_common.h"
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::detail {

namespace {
const char* kIsa = "AMD RDNA3 Instruction Set Architecture Reference Guide";
const char* kSection = "Wave Matrix Multiply Accumulate (WMMA): matrix layouts in VGPRs";

template <int kWave, int kOpsel>
AtomDesc gfx11(const std::string& name, ElemType in, ElemType acc) {
  using L = atoms::GFX11_WMMA_Layout<kWave, kOpsel>;
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = target_list(atoms::targets::kGfx11Wmma);
  d.m = L::M;
  d.n = L::N;
  d.k = L::K;
  d.a_type = d.b_type = in;
  d.c_type = acc;
  d.wave = kWave;
  d.a_slots = L::kA;
  d.b_slots = L::kB;
  d.c_slots = L::kC;
  d.expected = layout_of<L>();
  d.source = {kIsa, kSection};
  d.notes = std::string("A/B: lanes 16..") + std::to_string(kWave - 1) +
            " must replicate lanes 0..15 (ISA requirement; the probe tests it)";
  if (kOpsel >= 0) d.notes += std::string("; 16-bit accumulator in the ") + (kOpsel ? "high" : "low") +
                              " half (OPSEL=" + std::to_string(kOpsel) + "), the other half of each VGPR ignored";
  if (kWave == 64) d.notes += "; wave64 row = 4*slot + lane/16 not yet checked against the ISA text";
  return d;
}

template <int kWave>
void add_wave(std::vector<AtomDesc>& mma) {
  const std::string w = "_W" + std::to_string(kWave);
  mma.push_back(gfx11<kWave, -1>("GFX11_WMMA_16x16x16_F32F16" + w, ElemType::f16, ElemType::f32));
  mma.push_back(gfx11<kWave, -1>("GFX11_WMMA_16x16x16_F32BF16" + w, ElemType::bf16, ElemType::f32));
  mma.push_back(gfx11<kWave, 0>("GFX11_WMMA_16x16x16_F16F16" + w + "_OPSEL_LO", ElemType::f16, ElemType::f16));
  mma.push_back(gfx11<kWave, 0>("GFX11_WMMA_16x16x16_BF16BF16" + w + "_OPSEL_LO", ElemType::bf16, ElemType::bf16));
  mma.push_back(gfx11<kWave, 1>("GFX11_WMMA_16x16x16_F16F16" + w + "_OPSEL_HI", ElemType::f16, ElemType::f16));
  mma.push_back(gfx11<kWave, 1>("GFX11_WMMA_16x16x16_BF16BF16" + w + "_OPSEL_HI", ElemType::bf16, ElemType::bf16));
}
}  // namespace

void add_rdna3_atoms(std::vector<AtomDesc>& mma) {
  add_wave<32>(mma);
  add_wave<64>(mma);
}

}  // namespace flashprobe::probes::detail
