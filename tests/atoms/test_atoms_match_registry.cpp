// One source of truth per lane map: the probe registry (probes/src/expected_*.cpp) declares, under
// each atom's name, the layout the atom module states (atoms/include/flashprobe/atoms/*_layout.h) —
// the one the kernels place data by and whose mma() the probe executors run — slot for slot,
// replicas included (gfx11: lanes 16-31 hold the same A/B elements as lanes 0-15). The evidence that
// those layouts are the hardware's is the probe records replayed by tests/probes_nvidia/test_replay.cpp
// and tests/probes_amd/test_amd_replay.cpp; a disagreement here means a registry entry names the wrong
// atom, and is printed as the registry's diff (operand, T<lane>V<slot>, expected vs kernel).
#include <gtest/gtest.h>

#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/atoms/sm80_layout.h"
#include "flashprobe/atoms/sm90_wgmma_layout.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/layout.h"

namespace {
namespace pr = flashprobe::probes;

template <class Atom, class F>
pr::OperandLayout table(int rows, int cols, int slots, F f) {
  return pr::OperandLayout::from_function(rows, cols, Atom::kWave, slots, [&](int lane, int slot) {
    const auto c = f(lane, slot);
    return pr::Coord{c.row, c.col};
  });
}

template <class Atom>
pr::MmaLayout kernel_layout() {
  return {table<Atom>(Atom::M, Atom::K, Atom::kA, [](int l, int s) { return Atom::a(l, s); }),
          table<Atom>(Atom::K, Atom::N, Atom::kB, [](int l, int s) { return Atom::b(l, s); }),
          table<Atom>(Atom::M, Atom::N, Atom::kC, [](int l, int s) { return Atom::c(l, s); })};
}

template <class Atom>
void expect_matches(const char* registry_name) {
  SCOPED_TRACE(registry_name);
  const pr::AtomDesc* d = pr::find_mma_atom(registry_name);
  ASSERT_NE(d, nullptr) << "the registry has no atom " << registry_name;
  ASSERT_TRUE(d->expected.has_value()) << registry_name << " declares no layout";
  EXPECT_EQ(d->m, Atom::M);
  EXPECT_EQ(d->n, Atom::N);
  EXPECT_EQ(d->k, Atom::K);
  EXPECT_EQ(d->wave, Atom::kWave);
  ASSERT_EQ(d->a_slots, Atom::kA);
  ASSERT_EQ(d->b_slots, Atom::kB);
  ASSERT_EQ(d->c_slots, Atom::kC);
  const auto k = kernel_layout<Atom>();
  const auto diffs = pr::diff(*d->expected, k);
  EXPECT_TRUE(diffs.empty()) << "kernel atom vs registry (" << d->source.text() << "):\n" << pr::format_diff(diffs);
  // Replica structure is part of the contract (the kernel must fill every copy).
  EXPECT_EQ(d->expected->a.replica_groups(), k.a.replica_groups());
  EXPECT_EQ(d->expected->b.replica_groups(), k.b.replica_groups());
  EXPECT_EQ(d->expected->a.ignored(), k.a.ignored());
  EXPECT_EQ(d->expected->b.ignored(), k.b.ignored());
}

TEST(AtomsMatchRegistry, Sm80MmaSyncF16AndBf16) {
  expect_matches<flashprobe::atoms::SM80_16x8x16_Layout>("SM80_16x8x16_F32F16F16F32_TN");
  expect_matches<flashprobe::atoms::SM80_16x8x16_Layout>("SM80_16x8x16_F32BF16BF16F32_TN");
}

TEST(AtomsMatchRegistry, Sm90WgmmaEveryProbedN) {
  using flashprobe::atoms::SM90_64xNx16_Layout;
  expect_matches<SM90_64xNx16_Layout<8>>("SM90_64x8x16_F32F16F16_RS");
  expect_matches<SM90_64xNx16_Layout<16>>("SM90_64x16x16_F32F16F16_RS");
  expect_matches<SM90_64xNx16_Layout<64>>("SM90_64x64x16_F32F16F16_RS");
  expect_matches<SM90_64xNx16_Layout<128>>("SM90_64x128x16_F32F16F16_RS");
  expect_matches<SM90_64xNx16_Layout<256>>("SM90_64x256x16_F32F16F16_RS");
}

TEST(AtomsMatchRegistry, Gfx11WmmaWave32WithReplicas) {
  expect_matches<flashprobe::atoms::GFX11_WMMA_16x16x16_Layout>("GFX11_WMMA_16x16x16_F32F16_W32");
  expect_matches<flashprobe::atoms::GFX11_WMMA_16x16x16_Layout>("GFX11_WMMA_16x16x16_F32BF16_W32");
  // The replication the kernel relies on, stated directly: lane l+16 holds what lane l holds.
  const auto k = kernel_layout<flashprobe::atoms::GFX11_WMMA_16x16x16_Layout>();
  EXPECT_EQ(k.a.replica_of(16, 3), std::optional<int>(k.a.flat(0, 3)));
  EXPECT_EQ(k.b.replica_of(31, 15), std::optional<int>(k.b.flat(15, 15)));
}

TEST(AtomsMatchRegistry, Gfx12WmmaWave32) {
  expect_matches<flashprobe::atoms::GFX12_WMMA_16x16x16_Layout>("GFX12_WMMA_16x16x16_F32F16_W32");
  expect_matches<flashprobe::atoms::GFX12_WMMA_16x16x16_Layout>("GFX12_WMMA_16x16x16_F32BF16_W32");
}

TEST(AtomsMatchRegistry, CdnaMfma32x32x8) {
  expect_matches<flashprobe::atoms::CDNA_MFMA_32x32x8_Layout>("CDNA_MFMA_32x32x8_F32F16");
}

// The comparison itself: a planted one-slot change in a kernel-side table is reported by name.
struct PlantedSm80 : flashprobe::atoms::SM80_16x8x16_Layout {
  static constexpr flashprobe::atoms::Coord c(int lane, int i) {
    return lane == 5 && i == 2 ? flashprobe::atoms::Coord{0, 0} : SM80_16x8x16_Layout::c(lane, i);
  }
};
TEST(AtomsMatchRegistry, APlantedDifferenceIsNamed) {
  const auto* d = pr::find_mma_atom("SM80_16x8x16_F32F16F16F32_TN");
  ASSERT_NE(d, nullptr);
  const auto diffs = pr::diff(*d->expected, kernel_layout<PlantedSm80>());
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].lane, 5);
  EXPECT_EQ(diffs[0].slot, 2);
  EXPECT_NE(pr::format_diff(diffs).find("T05V2"), std::string::npos) << pr::format_diff(diffs);
}

}  // namespace

// The ldmatrix layout the mma kernel derives its fragment loads from is the registry's (the one the
// H100 load-path probe verified), slot for slot.
TEST(AtomsMatchRegistry, Sm75LdmatrixX4PlainAndTrans) {
  auto check = [](const char* name, auto ld) {
    using Ld = decltype(ld);
    SCOPED_TRACE(name);
    const pr::LoadAtomDesc* d = pr::find_load_atom(name);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->expected.has_value());
    ASSERT_EQ(d->rows, Ld::kRows);
    ASSERT_EQ(d->cols, Ld::kCols);
    ASSERT_EQ(d->slots, Ld::kSlots);
    const auto k = pr::OperandLayout::from_function(Ld::kRows, Ld::kCols, Ld::kWave, Ld::kSlots, [](int l, int s) {
      const auto c = Ld::at(l, s);
      return pr::Coord{c.row, c.col};
    });
    for (int l = 0; l < Ld::kWave; ++l)
      for (int s = 0; s < Ld::kSlots; ++s) EXPECT_EQ(d->expected->at(l, s), k.at(l, s)) << "T" << l << "V" << s;
  };
  check("SM75_LDMATRIX_X4_B16", flashprobe::atoms::SM75_LDMATRIX_X4_Layout<false>{});
  check("SM75_LDMATRIX_X4_B16_TRANS", flashprobe::atoms::SM75_LDMATRIX_X4_Layout<true>{});
}
