// Load-path probing: memory (row, col) -> (lane, slot) with absolute labels.
#include <gtest/gtest.h>

#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/load_path.h"

using namespace flashprobe::probes;

TEST(LoadPath, EveryLdmatrixFormIsRecovered) {
  for (const LoadAtomDesc& a : load_atoms()) {
    SimulatedLoader sim(*a.expected);
    const LoadProbeResult r = probe_load(a, sim);
    EXPECT_EQ(r.verdict, Verdict::matches) << report(r, false);
    EXPECT_EQ(r.derived, *a.expected) << a.name;
    EXPECT_TRUE(r.ok()) << report(r, false);
  }
}

TEST(LoadPath, LdmatrixX1IsRowPerQuadOfThreads) {
  const LoadAtomDesc& a = *find_load_atom("SM75_LDMATRIX_X1_B16");
  EXPECT_EQ(formula(*a.expected).text(), "row = lane >> 2; col = slot + 2*(lane & 3)");
  const LoadAtomDesc& t = *find_load_atom("SM75_LDMATRIX_X1_B16_TRANS");
  EXPECT_EQ(formula(*t.expected).text(), "row = slot + 2*(lane & 3); col = lane >> 2");
}

TEST(LoadPath, DuplicatesBecomeReplicasUnwrittenSlotsIgnoredGarbageAnomalies) {
  LoadAtomDesc a;
  a.name = "TOY";
  a.rows = 4;
  a.cols = 8;
  a.wave = 32;
  a.slots = 2;
  a.type = ElemType::bf16;
  const auto mem = load_encoding(a);
  std::vector<double> frag(64, 0.0);
  for (int lane = 0; lane < 32; ++lane) frag[static_cast<std::size_t>(2 * lane)] = mem[static_cast<std::size_t>(lane)];
  frag[1] = mem[0];   // lane 0 slot 1 duplicates lane 0 slot 0
  frag[3] = 12345.5;  // lane 1 slot 1: no element has that value
  const LoadProbeResult r = infer_load_path(a, frag);
  EXPECT_EQ(r.derived.at(5, 0), (Coord{0, 5}));
  EXPECT_EQ(r.derived.replica_of(0, 1), 0);
  EXPECT_TRUE(r.derived.at(2, 1).ignored());
  ASSERT_EQ(r.anomalies.size(), 1u);
  EXPECT_NE(r.anomalies[0].find("T01V1"), std::string::npos) << r.anomalies[0];
  EXPECT_TRUE(r.unloaded.empty());
}

TEST(StorePath, IsTheMirrorOfTheLoad) {
  const LoadAtomDesc& a = *find_load_atom("SM75_LDMATRIX_X4_B16_TRANS");
  const auto frag = store_encoding(a);
  std::vector<double> mem(static_cast<std::size_t>(a.rows * a.cols), 0.0);
  for (int i = 0; i < a.expected->size(); ++i) {
    const Coord c = a.expected->at_flat(i);
    mem[static_cast<std::size_t>(c.row * a.cols + c.col)] = frag[static_cast<std::size_t>(i)];
  }
  std::vector<std::string> anomalies;
  EXPECT_EQ(infer_store_path(a, mem, anomalies), *a.expected);
  EXPECT_TRUE(anomalies.empty());
}
