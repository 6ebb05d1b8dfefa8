// Hardware records from AMD GPUs (reports/data/<device>/..., sent by people who own them) replayed
// on the CPU (replay.h); and the replay itself tested on records made here by simulation.
#include <gtest/gtest.h>

#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/simulated.h"
#include "replay.h"

namespace fp = flashprobe::probes;

namespace {
// A record as `flashprobe probe NAME --json` writes it, from a simulated atom whose "hardware"
// layout is `hw` (source stays "simulated": nothing here is measured).
nlohmann::json simulated_record(const fp::AtomDesc& atom, const fp::MmaLayout& hw) {
  fp::SimulatedExecutor sim(atom, hw);
  nlohmann::json rec = flashprobe::record_header("probe", false);
  rec["source"] = "simulated";
  rec["results"] = nlohmann::json::array({nlohmann::json(fp::probe(atom, sim))});
  return rec;
}
}  // namespace

TEST(AmdReplay, ARecordOfTheDocumentedLayoutReplaysAsMatching) {
  for (const char* name : {"GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI", "GFX12_WMMA_16x16x16_F32BF16_W32",
                           "CDNA_MFMA_16x16x32_F32E4M3"}) {
    const fp::AtomDesc& atom = *fp::find_mma_atom(name);
    const auto out = fp::replay::replay_probe_record(simulated_record(atom, *atom.expected));
    ASSERT_EQ(out.size(), 1u) << name;
    EXPECT_TRUE(out[0].reproduces) << name;
    EXPECT_EQ(out[0].verdict, fp::Verdict::matches) << name;
    EXPECT_EQ(out[0].recorded_source, "simulated");
    EXPECT_TRUE(out[0].diff.empty()) << out[0].diff;
  }
}

TEST(AmdReplay, ARecordThatDisagreesWithTheDocumentIsReportedWithTheSlots) {
  const fp::AtomDesc& atom = *fp::find_mma_atom("GFX11_WMMA_16x16x16_F32F16_W64");
  fp::MmaLayout hw = *atom.expected;
  const fp::Coord a = hw.c.at(33, 2), b = hw.c.at(33, 3);
  hw.c.set(33, 2, b);
  hw.c.set(33, 3, a);
  const auto out = fp::replay::replay_probe_record(simulated_record(atom, hw));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].reproduces);
  EXPECT_EQ(out[0].verdict, fp::Verdict::differs);
  EXPECT_NE(out[0].diff.find("T33V2"), std::string::npos) << out[0].diff;
}

TEST(AmdReplay, RejectsWhatIsNotAProbeRecord) {
  EXPECT_THROW(fp::replay::replay_probe_record({{"schema", "flashprobe.check/1"}}), flashprobe::UsageError);
}

// The committed hardware records: each AMD result must replay, and agree with the documented layout
// (if it does not, the document -- expected_*.cpp -- is what changes, citing the record).
TEST(AmdReplay, CommittedHardwareRecords) {
  const auto paths = fp::replay::hardware_probe_records(FLASHPROBE_SOURCE_DIR "/reports/data");
  int amd = 0;
  for (const auto& p : paths) {
    for (const auto& o : fp::replay::replay_probe_record(flashprobe::read_json_file(p))) {
      ++amd;
      SCOPED_TRACE(p + ": " + o.atom + " [" + o.executor + "]");
      EXPECT_EQ(o.recorded_source, "hardware");
      EXPECT_TRUE(o.reproduces);
      EXPECT_EQ(o.verdict, fp::Verdict::matches) << o.diff;
    }
  }
  if (amd == 0) GTEST_SKIP() << "no AMD hardware probe records under reports/data yet (see probes/amd/README.md)";
}
