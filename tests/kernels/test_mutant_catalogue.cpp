// The mutant catalogue is complete and consistent: one entry per Bug value, each bound to a
// production kernel, with the property that must kill it (the kill itself is a GPU test).
#include <gtest/gtest.h>

#include <set>

#include "flashprobe/kernels/mutants.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {
namespace {

TEST(Mutants, OneEntryPerBugWithMetadata) {
  std::set<int> bugs;
  std::set<std::string> names;
  for (auto& m : mutant_catalogue()) {
    EXPECT_NE(m.bug, Bug::none) << m.name;
    EXPECT_TRUE(bugs.insert(static_cast<int>(m.bug)).second) << "bug listed twice: " << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_TRUE(find_kernel(m.kernel) || find_backward_kernel(m.kernel)) << m.name << " names kernel " << m.kernel;
    EXPECT_FALSE(m.description.empty() || m.mirrors.empty() || m.killed_by.empty()) << m.name;
  }
  EXPECT_EQ(bugs.size(), static_cast<std::size_t>(kLastBug)) << "every Bug value except none has an entry";
}

TEST(Mutants, TheRequiredBugClassesArePresent) {
  for (auto* n : {"softmax_block_not_pow2", "causal_top_left", "kv_offset_ignored", "gqa_mod", "tail_unmasked",
                  "masked_row_nan", "combine_skips_empty", "missing_barrier", "bf16_truncate", "lse_scale_twice",
                  "rowsum_f16", "bwd_no_rowsum_d", "bwd_gqa_unsummed", "bwd_softcap_grad_missing", "bwd_causal_missing", "bwd_dq_race",
                  "o_accum_f16", "v_reads_k_strides", "offset_32bit", "split_odd_dropped"})
    EXPECT_NE(find_mutant_meta(n), nullptr) << n;
}

TEST(Mutants, RunnableTableMirrorsTheCatalogue) {
  ASSERT_EQ(mutants().size() + backward_mutants().size(), mutant_catalogue().size());
  DeviceInfo dev;
  dev.vendor = "nvidia";
  dev.arch = "sm_90";
  dev.wave_size = 32;
  AttnProblem p;
  p.sq = 64;
  p.sk = 64;
  for (std::size_t i = 0; i < mutants().size(); ++i) {
    const Mutant& m = mutants()[i];
    EXPECT_EQ(m.meta.name, mutant_catalogue()[i].name);
    EXPECT_EQ(m.kernel.name, "mutant/" + m.meta.name);
    EXPECT_EQ(find_kernel(m.kernel.name), nullptr) << "mutants are never in the production registry";
    if (m.meta.kernel == "tiled") {
      p.d = p.dv = kMutantTiledDim;
      EXPECT_TRUE(m.kernel.supports(dev, p)) << m.meta.name;
      p.d = p.dv = 128;
      const Support s = m.kernel.supports(dev, p);
      EXPECT_FALSE(s) << m.meta.name;
      EXPECT_NE(s.reason.find("d=128"), std::string::npos) << s.reason;
    }
  }
}

}  // namespace
}  // namespace flashprobe::kernels
