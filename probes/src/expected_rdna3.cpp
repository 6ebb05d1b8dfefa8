// gfx11 (RDNA3) WMMA, 16x16x16. Each lane of a lane group of 16 holds one row of A (one column of B)
// with K contiguous in its slots; every other group of 16 lanes must hold the same data (wave32:
// lanes 16..31 replicate 0..15; wave64: lanes 16..63 replicate 0..15). The f32 accumulator
// interleaves rows between lane groups: row = G*slot + (lane >> 4) with G = wave / 16 groups.
// 16-bit accumulators (v_wmma_f16_16x16x16_f16, v_wmma_bf16_16x16x16_bf16) use the same VGPRs, one
// 16-bit element per VGPR in the half chosen by OPSEL: slot = 2*vgpr + opsel, the other half ignored.
// Cross-checked against: CK ck_tile WmmaTraits<gfx11> (wave32), GPUOpen "How to accelerate AI
// applications on RDNA 3 using WMMA" (wave32). The wave64 forms follow the same rule with 4 lane
// groups; that reading has not been checked against the ISA text in this session (see notes).
#include "expected_common.h"

namespace flashprobe::probes::detail {

namespace {
const char* kIsa = "AMD RDNA3 Instruction Set Architecture Reference Guide";
const char* kSection = "Wave Matrix Multiply Accumulate (WMMA): matrix layouts in VGPRs";

AtomDesc gfx11(const std::string& name, ElemType in, ElemType acc, int wave, int opsel) {
  const int groups = wave / 16;
  const bool packed = acc != ElemType::f32;  // 16-bit accumulator: one element per VGPR, OPSEL half
  const int vgprs = 256 / wave;              // C/D VGPRs: 8 in wave32, 4 in wave64
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151"};
  d.m = d.n = d.k = 16;
  d.a_type = d.b_type = in;
  d.c_type = acc;
  d.wave = wave;
  d.a_slots = d.b_slots = 16;
  d.c_slots = packed ? 2 * vgprs : vgprs;
  auto a = OperandLayout::from_function(16, 16, wave, 16, [](int lane, int s) { return Coord{lane & 15, s}; });
  auto b = OperandLayout::from_function(16, 16, wave, 16, [](int lane, int s) { return Coord{s, lane & 15}; });
  auto c = OperandLayout::from_function(16, 16, wave, d.c_slots, [&](int lane, int s) {
    if (packed && (s & 1) != opsel) return kIgnored;
    const int v = packed ? s >> 1 : s;
    return Coord{groups * v + (lane >> 4), lane & 15};
  });
  d.expected = MmaLayout{a, b, c};
  d.source = {kIsa, kSection};
  d.notes = std::string("A/B: lanes 16..") + std::to_string(wave - 1) +
            " must replicate lanes 0..15 (ISA requirement; the probe tests it)";
  if (packed) d.notes += std::string("; 16-bit accumulator in the ") + (opsel ? "high" : "low") + " half (OPSEL=" +
                         std::to_string(opsel) + "), the other half of each VGPR ignored";
  if (wave == 64) d.notes += "; wave64 row = 4*slot + lane/16 not yet checked against the ISA text";
  return d;
}
}  // namespace

void add_rdna3_atoms(std::vector<AtomDesc>& mma) {
  for (int wave : {32, 64}) {
    const std::string w = "_W" + std::to_string(wave);
    mma.push_back(gfx11("GFX11_WMMA_16x16x16_F32F16" + w, ElemType::f16, ElemType::f32, wave, 0));
    mma.push_back(gfx11("GFX11_WMMA_16x16x16_F32BF16" + w, ElemType::bf16, ElemType::f32, wave, 0));
    for (int opsel : {0, 1}) {
      const std::string o = opsel ? "_OPSEL_HI" : "_OPSEL_LO";
      mma.push_back(gfx11("GFX11_WMMA_16x16x16_F16F16" + w + o, ElemType::f16, ElemType::f16, wave, opsel));
      mma.push_back(gfx11("GFX11_WMMA_16x16x16_BF16BF16" + w + o, ElemType::bf16, ElemType::bf16, wave, opsel));
    }
  }
}

}  // namespace flashprobe::probes::detail
