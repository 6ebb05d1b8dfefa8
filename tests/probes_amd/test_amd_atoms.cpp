// The AMD atom table (atoms.h): shapes consistent with the instructions' arithmetic, targets right,
// and the host entry point refusing bad input before anything reaches a GPU.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/probes/amd/atoms.h"
#include "flashprobe/probes/amd/run.h"

namespace amd = flashprobe::probes::amd;

TEST(AmdAtoms, NamesAreUniqueAndFindable) {
  std::set<std::string_view> names;
  for (const auto& a : amd::kAmdAtoms) {
    EXPECT_TRUE(names.insert(a.name).second) << a.name;
    EXPECT_EQ(amd::find_amd_atom(a.name), &a);
  }
  EXPECT_EQ(amd::find_amd_atom("GFX11_WMMA_NOPE"), nullptr);
  EXPECT_EQ(amd::kAmdAtoms.size(), 36u);
}

// Every lane's slots together hold each matrix element exactly `replication` times: gfx11 WMMA
// replicates A/B across the 16-lane groups (twice in wave32, four times in wave64); gfx12 and MFMA
// do not replicate. The 16-bit accumulators of gfx11 carry two slots per D element (OPSEL halves).
TEST(AmdAtoms, SlotCountsMatchTheInstructionArithmetic) {
  for (const auto& a : amd::kAmdAtoms) {
    SCOPED_TRACE(std::string(a.name));
    const int repl = a.family == amd::AmdFamily::rdna3 ? a.wave / 16 : 1;
    EXPECT_EQ(a.a_slots * a.wave, a.m * a.k * repl);
    EXPECT_EQ(a.b_slots * a.wave, a.k * a.n * repl);
    const int halves = (a.acc == amd::AmdElem::f16 || a.acc == amd::AmdElem::bf16) ? 2 : 1;
    EXPECT_EQ(a.c_slots * a.wave, a.m * a.n * halves);
    EXPECT_EQ(a.opsel >= 0, halves == 2) << "OPSEL is the choice of half for 16-bit accumulators";
    if (a.family == amd::AmdFamily::cdna) {
      EXPECT_EQ(a.wave, 64) << "CDNA is wave64 only";
    }
  }
}

TEST(AmdAtoms, RunsOnTheRightArchitectures) {
  const auto& w = *amd::find_amd_atom("GFX11_WMMA_16x16x16_F32F16_W32");
  EXPECT_TRUE(amd::amd_atom_runs_on(w, "gfx1100"));
  EXPECT_TRUE(amd::amd_atom_runs_on(w, "gfx1151"));
  EXPECT_FALSE(amd::amd_atom_runs_on(w, "gfx1201"));
  EXPECT_FALSE(amd::amd_atom_runs_on(w, "gfx1030"));
  EXPECT_FALSE(amd::amd_atom_runs_on(w, "gfx942"));
  EXPECT_FALSE(amd::amd_atom_runs_on(w, "gfx11"));
  const auto& g12 = *amd::find_amd_atom("GFX12_WMMA_16x16x16_F32BF16_W64");
  EXPECT_TRUE(amd::amd_atom_runs_on(g12, "gfx1201"));
  EXPECT_FALSE(amd::amd_atom_runs_on(g12, "gfx1100"));
  const auto& bf = *amd::find_amd_atom("CDNA_MFMA_32x32x8_F32BF16_1K");
  EXPECT_TRUE(amd::amd_atom_runs_on(bf, "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(amd::amd_atom_runs_on(bf, "gfx908")) << "the bf16 _1k forms start with gfx90a";
  const auto& f8 = *amd::find_amd_atom("CDNA_MFMA_16x16x32_F32E4M3");
  EXPECT_TRUE(amd::amd_atom_runs_on(f8, "gfx942:sramecc+:xnack-"));
  EXPECT_FALSE(amd::amd_atom_runs_on(f8, "gfx950")) << "gfx950 reads OCP fp8, not FNUZ";
  EXPECT_FALSE(amd::amd_atom_runs_on(f8, "gfx90a"));
  EXPECT_FALSE(amd::amd_atom_runs_on(f8, "gfx9420"));
}

namespace {
std::vector<float> ones(std::size_t n) { return std::vector<float>(n, 1.0f); }
}  // namespace

TEST(AmdAtoms, RunRejectsBadInputBeforeTouchingAGpu) {
  const std::string name = "GFX11_WMMA_16x16x16_F32F16_W32";
  EXPECT_THROW(amd::run_amd_atom_experiments("NOPE", 1, {}, {}, {}), flashprobe::UsageError);
  // One experiment: A and B 32 lanes x 16 slots, C 32 x 8.
  EXPECT_THROW(amd::run_amd_atom_experiments(name, 1, ones(32 * 16 - 1), ones(32 * 16), ones(32 * 8)),
               flashprobe::UsageError);
  auto a = ones(32 * 16);
  a[5] = 1.0f + 1.0f / 4096;  // not an f16
  try {
    amd::run_amd_atom_experiments(name, 1, a, ones(32 * 16), ones(32 * 8));
    FAIL() << "an inexact f16 operand must be refused";
  } catch (const flashprobe::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("index 5"), std::string::npos) << e.what();
  }
}

TEST(AmdAtoms, RunWithoutAnAmdGpuSaysSo) {
  if (amd::amd_runtime_built() && flashprobe::has_device()) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(amd::run_amd_atom_experiments("CDNA_MFMA_16x16x16_F32F16", 1, ones(256), ones(256), ones(256)),
               flashprobe::NoDevice);
}
