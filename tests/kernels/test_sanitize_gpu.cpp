// Small, representative runs for compute-sanitizer (memcheck, racecheck, synccheck): every
// production kernel and kv_append on a few problems that exercise tails, GQA, causal masks and
// several tiles, each also checked against the oracle. SanitizeMutant.* runs the mutants whose only
// reliable killer is the race detector; scripts/gpu/run-all's sanitize stage expects racecheck to
// report hazards there and none in Sanitize.*. SanitizeVariants.* runs the kernel variants named in
// FLASHPROBE_SANITIZE_VARIANTS (variants.h, e.g. "mma/classes=coarse") on the same problems (skipped when
// it names none; the stage checks that it ran). Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "../common/gpu_skip.h"
#include "flashprobe/kernels/kv_append.h"
#include "flashprobe/kernels/mutants.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/kernels/variants.h"
#include "flashprobe/oracle/check.h"

namespace flashprobe::kernels {
namespace {

std::vector<AttnProblem> sample_problems() {
  std::vector<AttnProblem> v;
  AttnProblem a;  // two query tiles with a tail, three key tiles with a tail, GQA, causal
  a.batch = 2; a.hq = 4; a.hkv = 2; a.sq = 70; a.sk = 130; a.d = a.dv = 64; a.causal = Causal::bottom_right;
  v.push_back(a);
  AttnProblem b = a;  // bf16, D = 128, window, per-batch key lengths with a zero
  b.dtype = b.out_dtype = DType::bf16; b.d = b.dv = 128; b.window_left = 40; b.seqlens_k = {130, 0};
  v.push_back(b);
  AttnProblem c;  // decode: one query row over many keys
  c.batch = 2; c.hq = 8; c.hkv = 2; c.sq = 1; c.sk = 333; c.d = c.dv = 128; c.kv_offset = 332; c.causal = Causal::bottom_right;
  v.push_back(c);
  AttnProblem m = c;  // decode with one row per block (MHA: decode's 16-byte loop and its two steps in flight)
  m.hq = m.hkv = 4; m.dtype = m.out_dtype = DType::bf16;
  v.push_back(m);
  AttnProblem e = a;  // two 128-row query blocks of the mma kernel, its soft-cap instantiation at D = 128
  e.batch = 1; e.sq = 150; e.sk = 170; e.d = e.dv = 128; e.softcap = 20;
  v.push_back(e);
  // Head dims below the tensor-core tile class (registry.h), packed rows: a load of the padding
  // columns past d or dv on the last rows would leave the allocations (memcheck), a store past dv
  // would write the next row. d = 40 (class 64 of mma and wgmma), 72 / 40 (mma class 80, wgmma
  // 128), MLA's 192 / 128, 136 and 176 (mma's fine classes 192 and 160, head_dim_classes.h; 256 in
  // mma/classes=coarse, its general instantiation), 24 / 16 (mma/small=c32's 32-wide class), causal,
  // GQA, tails.
  for (auto [dq, dv] : {std::pair{40, 40}, std::pair{72, 40}, std::pair{192, 128}, std::pair{136, 136}, std::pair{176, 176},
                        std::pair{24, 16}}) {
    AttnProblem t = a;
    t.d = dq;
    t.dv = dv;
    t.sq = 150;
    v.push_back(t);
  }
  AttnProblem d = a;  // f32 and an odd head dim (ref3pass only)
  d.dtype = d.out_dtype = DType::f32; d.d = d.dv = 59;
  v.push_back(d);
  return v;
}

// Runs k on every sample problem it takes, each checked for clean guards and against the oracle;
// returns how many ran.
int run_samples(const KernelInfo& k, const DeviceInfo& dev) {
  int runs = 0;
  for (const AttnProblem& p : sample_problems()) {
    if (!k.supports(dev, p)) continue;
    const AttnInputs in = random_inputs(p, 5);
    const RunResult r = run_kernel(k, p, in);
    EXPECT_TRUE(r.clean()) << k.name << " " << p.id() << ": " << r.describe();
    const auto chk = oracle::check(p, in, r.out);
    EXPECT_TRUE(chk.pass) << k.name << " " << chk.summary();
    ++runs;
  }
  return runs;
}

TEST(Sanitize, ProductionKernelsOnRepresentativeProblems) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  int runs = 0;
  for (const KernelInfo& k : kernels()) runs += run_samples(k, dev);
  EXPECT_GE(runs, 8);
}

TEST(SanitizeVariants, NamedVariantsOnRepresentativeProblems) {
  FP_SKIP_WITHOUT_GPU();
  const char* env = std::getenv("FLASHPROBE_SANITIZE_VARIANTS");
  std::istringstream names(env ? env : "");
  std::vector<std::string> named;
  for (std::string n; names >> n;) named.push_back(n);
  if (named.empty()) GTEST_SKIP() << "FLASHPROBE_SANITIZE_VARIANTS names no variant";
  const DeviceInfo dev = require_device();
  for (const std::string& n : named) {
    const KernelInfo k = find_variant(n);  // UsageError (a failure) for a name this build does not know
    const int runs = run_samples(k, dev);
    std::cout << "sanitized variant " << k.name << ": " << runs << " problems" << std::endl;
    EXPECT_GE(runs, 1) << k.name << " takes none of the problems on " << dev.arch;
  }
}

TEST(Sanitize, KvAppend) {
  FP_SKIP_WITHOUT_GPU();
  KvAppendProblem a;
  a.batch = 2; a.hkv = 2; a.d = a.dv = 64; a.s_new = 5; a.s_cache = 40; a.offsets = {3, 35};
  AttnProblem shape;  // for input tensors of the right sizes
  shape.batch = 2; shape.hq = shape.hkv = 2; shape.sq = 5; shape.sk = 40; shape.d = shape.dv = 64;
  const AttnInputs in = random_inputs(shape, 3);
  Tensor kn(DType::f16, 2LL * 5 * 2 * 64), vn(DType::f16, 2LL * 5 * 2 * 64);
  for (std::int64_t i = 0; i < kn.size(); ++i) kn.set(i, in.q.get(i % in.q.size()));
  for (std::int64_t i = 0; i < vn.size(); ++i) vn.set(i, -in.q.get(i % in.q.size()));
  const KvAppendResult r = run_kv_append(a, kn, vn, in.k, in.v);
  EXPECT_TRUE(r.guard_damage.empty());
}

TEST(SanitizeMutant, MissingBarrierRunsUnderTheRaceDetector) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  for (const Mutant& m : mutants()) {
    if (m.meta.killed_by.find("racecheck") == std::string::npos) continue;
    AttnProblem p;  // many K/V tiles: every tile load races with the previous tile's reads
    p.batch = 1; p.hq = 2; p.hkv = 2; p.sq = 64; p.sk = 512; p.d = p.dv = kMutantTiledDim;
    ASSERT_TRUE(static_cast<bool>(m.kernel.supports(dev, p))) << m.meta.name;
    (void)run_kernel(m.kernel, p, random_inputs(p, 9));
  }
}

}  // namespace
}  // namespace flashprobe::kernels
