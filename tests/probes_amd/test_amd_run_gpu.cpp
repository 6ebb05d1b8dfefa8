// Every AMD atom the present GPU has, run through the real instruction with two layout-free
// experiments (no expected layout needed, so a wrong layout table cannot hide a broken kernel):
//   A = B = 0, C distinct  ->  D == C in every slot (C/D round trip through the registers);
//   A = B = 1, C = 0       ->  every D element equals K; for gfx11's 16-bit accumulators the
//                              OPSEL-chosen half holds K and the other half passes C (0) through.
// Skips without an AMD GPU; on one, an atom its architecture lacks is skipped by name.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "../common/gpu_skip.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/probes/amd/run.h"

namespace amd = flashprobe::probes::amd;

namespace flashprobe::probes::amd {
// gtest prints test parameters; the atom's name says everything.
inline void PrintTo(const AmdAtomShape& a, std::ostream* os) { *os << a.name; }
}  // namespace flashprobe::probes::amd

namespace {
constexpr int kExperiments = 5;  // more than one block's worth of waves is not needed; 5 spans two blocks

class AmdAtomOnGpu : public ::testing::TestWithParam<amd::AmdAtomShape> {};

TEST_P(AmdAtomOnGpu, PassThroughAndAllOnes) {
  FP_SKIP_WITHOUT_GPU();
  const auto& atom = GetParam();
  const auto dev = flashprobe::require_device();
  if (dev.vendor != "amd" || !amd::amd_atom_runs_on(atom, dev.arch))
    GTEST_SKIP() << atom.name << " does not exist on " << dev.arch;
  const std::size_t lanes = static_cast<std::size_t>(kExperiments) * atom.wave;
  std::vector<float> zeros_a(lanes * atom.a_slots, 0.0f), zeros_b(lanes * atom.b_slots, 0.0f);
  std::vector<float> c(lanes * atom.c_slots);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 1000) - 500.0f;  // exact in f16/bf16
  const auto d = amd::run_amd_atom_experiments(atom.name, kExperiments, zeros_a, zeros_b, c);
  ASSERT_EQ(d.size(), c.size());
  for (std::size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d[i], c[i]) << "pass-through, flat index " << i;

  std::vector<float> ones_a(zeros_a.size(), 1.0f), ones_b(zeros_b.size(), 1.0f), zero_c(c.size(), 0.0f);
  const auto s = amd::run_amd_atom_experiments(atom.name, kExperiments, ones_a, ones_b, zero_c);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int slot = static_cast<int>(i % atom.c_slots);
    const bool chosen = atom.opsel < 0 || slot % 2 == atom.opsel;
    ASSERT_EQ(s[i], chosen ? static_cast<float>(atom.k) : 0.0f) << "all-ones, flat index " << i << " slot " << slot;
  }
}

INSTANTIATE_TEST_SUITE_P(All, AmdAtomOnGpu, ::testing::ValuesIn(amd::kAmdAtoms),
                         [](const auto& p) { return std::string(p.param.name); });
}  // namespace
