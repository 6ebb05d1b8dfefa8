// The probe engine on the real AMD instructions (label gpu, hip tree): for every AMD atom the GPU
// has, the derived layout must be sound and match the documented one. Skips without an AMD GPU.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "../common/gpu_skip.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/executor.h"

namespace fp = flashprobe::probes;

namespace {
class AmdProbeOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(AmdProbeOnGpu, DerivedLayoutMatchesTheDocument) {
  FP_SKIP_WITHOUT_GPU();
  const fp::AtomDesc& atom = *fp::find_mma_atom(GetParam());
  std::string why;
  auto ex = fp::make_hardware_executor(atom, why);
  if (!ex) GTEST_SKIP() << why;
  const fp::ProbeResult r = fp::probe(atom, *ex);
  EXPECT_EQ(r.source, "hardware");
  EXPECT_TRUE(r.ok()) << fp::report(r, true);
  EXPECT_EQ(r.verdict, fp::Verdict::matches) << fp::format_diff(r.diff);
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (const auto& a : fp::mma_atoms())
    if (a.vendor == fp::Vendor::amd) v.push_back(a.name);
  return v;
}
INSTANTIATE_TEST_SUITE_P(All, AmdProbeOnGpu, ::testing::ValuesIn(names()),
                         [](const auto& p) { return p.param; });
}  // namespace
