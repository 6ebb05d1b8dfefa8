// The layout value: replicas and ignored slots, equality and diff, grids, JSON round trip.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/layout.h"

using namespace flashprobe::probes;

namespace {
const MmaLayout& expected(const char* name) { return find_mma_atom(name)->expected.value(); }
}  // namespace

TEST(Layout, Rdna3Wave32ALanes16To31ReplicateLanes0To15) {
  const OperandLayout& a = expected("GFX11_WMMA_16x16x16_F32F16_W32").a;
  for (int lane = 0; lane < 32; ++lane)
    for (int slot = 0; slot < 16; ++slot) {
      const auto r = a.replica_of(lane, slot);
      if (lane < 16) {
        EXPECT_FALSE(r.has_value()) << lane << " " << slot;
      } else {
        ASSERT_EQ(r, a.flat(lane - 16, slot)) << lane << " " << slot;
      }
    }
  EXPECT_EQ(a.replica_groups().size(), 256u);
  EXPECT_TRUE(a.ignored().empty());
  EXPECT_TRUE(a.covers_all());
  EXPECT_FALSE(a.injective());
}

TEST(Layout, OpselHighIgnoresTheLowHalves) {
  const OperandLayout& c = expected("GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI").c;
  EXPECT_EQ(c.slots(), 16);
  for (int i : c.ignored()) EXPECT_EQ(i % 2, 0) << "slot " << i % 16 << " of lane " << i / 16;
  EXPECT_EQ(c.ignored().size(), 32u * 8u);
  EXPECT_TRUE(c.injective());
  EXPECT_EQ(c.at(17, 3), (Coord{3, 1}));  // VGPR 1, high half: row 2*1 + (17 >> 4), col 17 & 15
}

TEST(Layout, DiffNamesEverySlotThatDisagrees) {
  MmaLayout a = expected("SM80_16x8x16_F32F16F16F32_TN");
  MmaLayout b = a;
  EXPECT_EQ(a, b);
  EXPECT_TRUE(diff(a, b).empty());
  b.a.set(5, 2, kIgnored);
  b.c.set(31, 3, b.c.at(0, 0));
  ASSERT_NE(a, b);
  const auto d = diff(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].op, Operand::A);
  EXPECT_EQ(d[0].lane, 5);
  EXPECT_EQ(d[0].slot, 2);
  EXPECT_TRUE(d[0].derived.ignored());
  EXPECT_EQ(d[1].op, Operand::C);
  const std::string text = format_diff(d);
  EXPECT_NE(text.find("A T05V2: expected (9, 2), derived ignored"), std::string::npos) << text;
  EXPECT_NE(text.find("C/D T31V3: expected (15, 7), derived (0, 0)"), std::string::npos) << text;
  EXPECT_THROW(diff(a.a, a.b, Operand::A), std::invalid_argument);
}

TEST(Layout, GridPutsEachHolderInItsCell) {
  const std::string g = grid(expected("GFX11_WMMA_16x16x16_F32F16_W32").c, "C");
  // Row 1, column 0 is held by lane 16 slot 0 (row = 2*slot + lane/16).
  const auto line = g.find("\n    1:");
  ASSERT_NE(line, std::string::npos) << g;
  EXPECT_EQ(g.substr(line + 7, 6), " T16V0") << g;
  const std::string ga = grid(expected("GFX11_WMMA_16x16x16_F32F16_W32").a, "A");
  EXPECT_NE(ga.find("T00V0+"), std::string::npos) << ga;
  EXPECT_NE(ga.find("replicas: 256 slots"), std::string::npos) << ga;
}

TEST(Layout, JsonRoundTripsEveryExpectedLayout) {
  for (const AtomDesc& a : mma_atoms()) {
    if (!a.expected) continue;
    const nlohmann::json j = *a.expected;
    const MmaLayout back = j.get<MmaLayout>();
    EXPECT_EQ(back, *a.expected) << a.name;
    EXPECT_EQ(nlohmann::json::parse(j.dump()).get<MmaLayout>(), *a.expected) << a.name;
  }
}

TEST(Layout, BadJsonIsAUsageError) {
  nlohmann::json j = expected("SM80_16x8x8_F32F16F16F32_TN").a;
  j["table"][3] = nlohmann::json::array({99, 0});
  EXPECT_THROW(j.get<OperandLayout>(), flashprobe::UsageError);
  nlohmann::json k = expected("SM80_16x8x8_F32F16F16F32_TN").a;
  k["table"].erase(0);
  EXPECT_THROW(k.get<OperandLayout>(), flashprobe::UsageError);
  EXPECT_THROW(nlohmann::json::object().get<MmaLayout>(), flashprobe::UsageError);
}

// A record's layout is read strictly and its size checked before anything is allocated: before,
// lanes = slots = 2^31 - 1 with an empty table threw std::length_error from the allocation (not a
// UsageError), and 2.0, true and [row, col, extra] were read as numbers.
TEST(Layout, RecordedLayoutsAreReadStrictlyAndBoundedByTheirTable) {
  const nlohmann::json good = expected("SM80_16x8x8_F32F16F16F32_TN").a;
  auto refused = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = good;
    if (key.rfind("table", 0) == 0) j["table"][3] = value;
    else j[key] = value;
    try {
      (void)j.get<OperandLayout>();
      ADD_FAILURE() << key << " = " << value.dump() << " was read";
    } catch (const flashprobe::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("layout JSON"), std::string::npos) << e.what();
    }
  };
  nlohmann::json huge = {{"rows", 16}, {"cols", 8}, {"lanes", 2147483647}, {"slots", 2147483647}, {"table", nlohmann::json::array()}};
  EXPECT_THROW(huge.get<OperandLayout>(), flashprobe::UsageError);
  huge["lanes"] = huge["slots"] = 65536;
  EXPECT_THROW(huge.get<OperandLayout>(), flashprobe::UsageError);
  refused("rows", 16.0);
  refused("lanes", true);
  refused("slots", 4294967298);
  refused("table", nlohmann::json::array({1.5, 0}));
  refused("table", nlohmann::json::array({1, 0, 7}));
  refused("table", nlohmann::json::array({-1, 0}));
  refused("table", 3);
  EXPECT_EQ(good.get<OperandLayout>(), expected("SM80_16x8x8_F32F16F16F32_TN").a);
}

TEST(Layout, SetRejectsPositionsOutsideTheMatrix) {
  OperandLayout l(4, 4, 32, 1);
  EXPECT_THROW(l.set(0, 0, Coord{4, 0}), std::out_of_range);
  EXPECT_THROW(l.set(32, 0, Coord{0, 0}), std::out_of_range);
  EXPECT_THROW(OperandLayout(0, 4, 32, 1), std::invalid_argument);
}
