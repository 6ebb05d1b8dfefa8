// gfx12 (RDNA4) WMMA, 16x16x16 with f32 accumulators. The layout changed from gfx11: no replication;
// K is split between lane groups. wave32: A lane l holds row l & 15, k = 8*(l >> 4) + slot (8 slots);
// C/D row = slot + 8*(lane >> 4). wave64: A k = 4*(l >> 4) + slot (4 slots); C/D row = slot +
// 8*((lane >> 4) & 1) + 4*(lane >> 5).
// Cross-checked against CK ck_tile WmmaTraits<gfx12> (wave32: kABKLane = 2, kABK1PerLane = 8,
// kCM1PerLane = 8). The wave64 forms come from a third-party reading of the ISA and are flagged so.
#include "expected_common.h"

namespace flashprobe::probes::detail {

namespace {
AtomDesc gfx12(const std::string& name, ElemType in, int wave) {
  AtomDesc d;
  d.name = name;
  d.vendor = Vendor::amd;
  d.targets = {"gfx1200", "gfx1201"};
  d.m = d.n = d.k = 16;
  d.a_type = d.b_type = in;
  d.c_type = ElemType::f32;
  d.wave = wave;
  const int ab = 256 / wave, cs = 256 / wave;
  d.a_slots = d.b_slots = ab;
  d.c_slots = cs;
  auto a = OperandLayout::from_function(16, 16, wave, ab, [ab](int lane, int s) { return Coord{lane & 15, ab * (lane >> 4) + s}; });
  auto b = OperandLayout::from_function(16, 16, wave, ab, [ab](int lane, int s) { return Coord{ab * (lane >> 4) + s, lane & 15}; });
  auto c = OperandLayout::from_function(16, 16, wave, cs, [wave](int lane, int s) {
    const int row = wave == 32 ? s + 8 * (lane >> 4) : s + 8 * ((lane >> 4) & 1) + 4 * (lane >> 5);
    return Coord{row, lane & 15};
  });
  d.expected = MmaLayout{a, b, c};
  d.source = {"AMD RDNA4 Instruction Set Architecture Reference Guide",
              "Wave Matrix Multiply Accumulate (WMMA): matrix layouts in VGPRs"};
  d.notes = wave == 32 ? "no replicated lanes; K split between lanes 0-15 and 16-31"
                       : "wave64 layout from a third-party reading of the ISA; not yet checked against the ISA text";
  return d;
}
}  // namespace

void add_rdna4_atoms(std::vector<AtomDesc>& mma) {
  for (int wave : {32, 64}) {
    const std::string w = "_W" + std::to_string(wave);
    mma.push_back(gfx12("GFX12_WMMA_16x16x16_F32F16" + w, ElemType::f16, wave));
    mma.push_back(gfx12("GFX12_WMMA_16x16x16_F32BF16" + w, ElemType::bf16, wave));
  }
}

}  // namespace flashprobe::probes::detail
