// Every kernel against the oracle on the deterministic grid (kernel_grid.h), fp16 and bf16 (and f32
// for ref3pass): agreement with the double-precision oracle, guard bands intact, every output element
// written, inputs untouched; decode with forced split counts; bitwise determinism; KV append then
// attend; and every mutant killed by at least one case. Skips without a GPU.
//
// One run tells everything: each test prints a summary (cases run, passed, the failing case ids
// with the oracle's summary) and, when FLASHPROBE_RECORD_DIR is set, writes JSON records there
// (record_header("kernel_grid") + one record per case).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "../common/gpu_skip.h"
#include "../common/kernel_device.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/kv_append.h"
#include "flashprobe/kernels/mutants.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/kernels/select.h"
#include "flashprobe/kernels/variants.h"
#include "flashprobe/oracle/check.h"
#include "kernel_grid.h"

namespace flashprobe::kernels {
namespace {

using testing::GridCase;
using testing::kernel_grid;

std::vector<DType> dtypes_for(const std::string& kernel) {
  if (kernel == "ref3pass") return {DType::f16, DType::bf16, DType::f32};
  return {DType::f16, DType::bf16};
}

// Collects per-case records and failures of one test; prints a summary and writes the record file.
struct Report {
  std::string name;
  nlohmann::json cases = nlohmann::json::array();
  int run = 0, passed = 0, unsupported = 0;
  std::vector<std::string> failures;

  explicit Report(std::string n) : name(std::move(n)) {}
  void add(const std::string& kernel, const std::string& case_id, bool pass, nlohmann::json rec, const std::string& why) {
    ++run;
    if (pass) ++passed;
    else failures.push_back(kernel + " " + case_id + ": " + why);
    rec["kernel"] = kernel;
    rec["case"] = case_id;
    rec["pass"] = pass;
    cases.push_back(std::move(rec));
  }
  ~Report() {
    std::cout << "[" << name << "] " << run << " case(s) run, " << passed << " passed, " << failures.size()
              << " failed, " << unsupported << " refused by supports()\n";
    for (std::size_t i = 0; i < failures.size() && i < 40; ++i) std::cout << "  FAIL " << failures[i] << "\n";
    if (failures.size() > 40) std::cout << "  ... " << failures.size() - 40 << " more\n";
    if (const char* dir = std::getenv("FLASHPROBE_RECORD_DIR")) {
      nlohmann::json j = record_header("kernel_grid");
      j["test"] = name;
      j["run"] = run;
      j["passed"] = passed;
      j["cases"] = cases;
      // A variant's name ("mma/order=rows") is no file name: "/" made a directory that does not exist,
      // and the write's UsageError, thrown from this destructor, aborted the whole binary.
      std::string file = name;
      for (char& c : file)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
      try {
        std::filesystem::create_directories(dir);
        write_json_file(std::string(dir) + "/kernel_grid_" + file + ".json", j);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "[" << name << "] record not written: " << e.what();
      }
    }
  }
};

// Runs one kernel on one case and judges it: oracle agreement plus the runner's findings.
struct Outcome {
  bool pass = false;
  std::string why;
  nlohmann::json rec;
  RunResult run;
};
Outcome judge(const KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
  Outcome r;
  r.run = run_kernel(k, p, in);
  const oracle::CheckResult c = oracle::check(p, in, r.run.out);
  r.rec = c.to_json();
  r.rec["run_findings"] = r.run.describe();
  r.pass = c.pass && r.run.clean();
  if (!c.pass) r.why = c.summary();
  if (!r.run.clean()) r.why += (r.why.empty() ? "" : "; ") + r.run.describe();
  return r;
}

// Runs every grid case k takes on this device; returns the problems it ran.
std::vector<AttnProblem> run_grid(const KernelInfo& k, Report& rep) {
  const DeviceInfo dev = require_device();
  std::vector<AttnProblem> ran;
  for (const GridCase& c : kernel_grid())
    for (DType t : dtypes_for(k.name)) {
      const AttnProblem p = c.with_dtype(t);
      if (!k.supports(dev, p)) {
        ++rep.unsupported;
        continue;
      }
      const AttnInputs in = random_inputs(p, c.seed, c.dist);
      Outcome o = judge(k, p, in);
      rep.add(k.name, c.id(t), o.pass, std::move(o.rec), o.why);
      ran.push_back(p);
    }
  return ran;
}

class KernelGrid : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelGrid, AgreesWithOracleOnEveryCase) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  const KernelInfo k = kernel_or_variant(GetParam());
  Report rep{GetParam()};
  const std::vector<AttnProblem> ran = run_grid(k, rep);
  if (rep.run == 0) {
    // A kernel for one architecture (wgmma: sm_90) refuses every case elsewhere: say why, skip. One
    // that runs on this device and ran none of the grid's cases fails.
    const std::string why = flashprobe::testing::refusal_on_device(k, dev);
    if (why.empty())
      FAIL() << GetParam() << " runs on " << dev.arch << " but ran none of the grid's cases (" << rep.unsupported
             << " refused by supports())";
    GTEST_SKIP() << "no grid case runs on this device: " << why;
  }
  // Each of its tile classes or plans on this device ran cases (kernel_grid.h: grid_paths).
  for (const testing::GridPath& g : testing::grid_paths(k, dev, ran))
    EXPECT_GT(g.cases, 0) << GetParam() << " on " << dev.arch << ": no grid case ran in its " << g.name;
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}
// Both instantiations are named after the kernel or variant, with every character that is not a letter
// or digit as '_' ("mma" -> Kernels/KernelGrid.AgreesWithOracleOnEveryCase/mma, "mma/order=rows" ->
// Variants/KernelGrid.AgreesWithOracleOnEveryCase/mma_order_rows): a filter written with a kernel's name
// selects its test (with index names, "/mma" matched no test and a command with it ran 0 tests).
static std::string grid_test_name(const ::testing::TestParamInfo<std::string>& i) {
  std::string n = i.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}
INSTANTIATE_TEST_SUITE_P(Kernels, KernelGrid,
                         ::testing::Values(std::string("ref3pass"), std::string("tiled"), std::string("decode"),
                                           std::string("mma"), std::string("wgmma")),
                         grid_test_name);
// The named variants of this build (variants.h: block orders, the lazy rescale, the full wgmma grid
// and, where built, the other wgmma schedules), each over the same grid; the test is named after the
// variant ("mma/order=rows" -> Variants/KernelGrid.AgreesWithOracleOnEveryCase/mma_order_rows).
INSTANTIATE_TEST_SUITE_P(Variants, KernelGrid, ::testing::ValuesIn(variant_names()), grid_test_name);

// Decode with forced split counts: 1, even, odd, and more splits than keys (empty splits), on the
// cases where splits matter: edge key counts, windows that empty the first splits, zero-length keys.
TEST(DecodeSplits, AnySplitCountAgrees) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"decode_splits"};
  for (int splits : {1, 2, 3, 5, 7, 64}) {
    const KernelInfo k = decode_with_splits(splits);
    for (const GridCase& c : kernel_grid()) {
      if (c.feature != "sk_edge" && c.feature != "window" && c.feature != "seqlens" && c.feature != "kv_offset") continue;
      const AttnProblem p = c.with_dtype(DType::f16);
      if (!k.supports(dev, p)) continue;
      const AttnInputs in = random_inputs(p, c.seed, c.dist);
      Outcome o = judge(k, p, in);
      rep.add(k.name, c.id(DType::f16), o.pass, std::move(o.rec), o.why);
    }
  }
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// Kernel k against ref on grid case c in dtype t (skipped where k does not take it): a pass when O
// and LSE are bitwise equal and k's run is clean.
void add_bitwise_comparison(Report& rep, const DeviceInfo& dev, const KernelInfo& k, const KernelInfo& ref, const GridCase& c, DType t) {
  const AttnProblem p = c.with_dtype(t);
  if (!k.supports(dev, p)) return;
  const AttnInputs in = random_inputs(p, c.seed, c.dist);
  const RunResult a = run_kernel(ref, p, in), b = run_kernel(k, p, in);
  const bool same = a.out.o.bytes == b.out.o.bytes &&
                    std::memcmp(a.out.lse.data(), b.out.lse.data(), a.out.lse.size() * sizeof(float)) == 0;
  rep.add(k.name, c.id(t), same && b.clean(), {{"bitwise_equal", same}, {"run_findings", b.describe()}},
          same ? b.describe() : "differs from " + ref.name);
}

// decode/fused=on computes each split's partial as the split kernel does and combines with the same
// code, whichever block walks the split: bitwise the O and LSE of decode with the same split count,
// for split counts 1, even, odd and more than the keys (empty splits), and walks of 1 (one block
// per split, arrival counters), 2 and 3 (blocks crossing split borders, a shorter last block) and 64
// (one block per row tile, no counters), on every grid case in f16 and, at the planned walk, bf16. So
// the variant is batch invariant exactly where decode is, whatever walk the batch chooses.
TEST(DecodeWalk, FusedGivesBitwiseTheSplitKernelsOutput) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"decode_walk"};
  for (const GridCase& c : kernel_grid()) {
    // The plan's split count is decode_fused_splits' (half the resident blocks), not decode's.
    add_bitwise_comparison(rep, dev, find_variant("decode/fused=on"),
                           decode_with_splits(decode_default_fused_splits(c.with_dtype(DType::bf16))), c, DType::bf16);
    for (int splits : {1, 2, 7, 64})
      for (int walk : {1, 2, 3, 64})
        add_bitwise_comparison(rep, dev,
                               find_variant("decode/splits=" + std::to_string(splits) + ",fused=on,walk=" + std::to_string(walk)),
                               decode_with_splits(splits), c, DType::f16);
  }
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// decode/combine=wide|pdl: the same sums as decode_combine in the same order, so bitwise decode's
// output (O and LSE) at every grid case, with decode/depth=3's split kernel too (the same steps and
// arithmetic, its loads two steps ahead; blocks of one row, the others run decode's split kernel): forced split counts 1, 2, 7, 64 and 200 (more than a combine
// block's threads: its weights in two chunks; more splits than keys: empty splits), and the plans
// (decode/combine=pdl at decode's count, decode/plan=half,combine=pdl at decode_fused_splits').
TEST(DecodeCombine, WideGivesBitwiseTheLoopsOutput) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"decode_combine"};
  for (const GridCase& c : kernel_grid()) {
    add_bitwise_comparison(rep, dev, find_variant("decode/combine=pdl"),
                           decode_with_splits(decode_default_splits(c.with_dtype(DType::f16))), c, DType::f16);
    add_bitwise_comparison(rep, dev, find_variant("decode/plan=half,combine=pdl"),
                           decode_with_splits(decode_default_fused_splits(c.with_dtype(DType::bf16))), c, DType::bf16);
    for (int splits : {1, 2, 7, 64, 200})
      for (const char* combine : {"wide", "pdl", "pdl,depth=3"})
        add_bitwise_comparison(rep, dev, find_variant("decode/splits=" + std::to_string(splits) + ",combine=" + combine),
                               decode_with_splits(splits), c, splits % 2 ? DType::f16 : DType::bf16);
  }
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// decode/mma=on: the tensor-core split kernel (src/decode_mma.cuh) where it takes the problem,
// decode's elsewhere. Against the oracle at forced split counts 1, 2, 3, 7 and 64 (uneven borders,
// more splits than keys) on the grid cases where splits matter, and at its plan and forced counts on
// long key ranges that run its 3-stage ring round many times: GQA groups of 4 and 16 rows, sq 2 and
// 4 with a causal window (rows of one tile with different ranges), per-batch key lengths, d 64, 72
// (k-steps past d) and 128, dv != d; f16 and bf16.
std::vector<GridCase> decode_mma_long_cases() {
  using testing::make_problem;
  std::vector<GridCase> v;
  std::uint64_t seed = 7100;
  auto add = [&](AttnProblem p) { v.push_back({"mma_long", std::move(p), InputDist{}, seed++}); };
  add(make_problem(2, 8, 2, 1, 3000, 128));
  add(make_problem(1, 16, 1, 1, 2100, 64));
  AttnProblem w = make_problem(2, 8, 2, 4, 1500, 128);
  w.causal = Causal::bottom_right;
  w.window_left = 700;
  add(w);
  AttnProblem s = make_problem(3, 6, 2, 2, 1200, 72);
  s.seqlens_k = {1200, 5, 640};
  add(s);
  AttnProblem dv = make_problem(1, 8, 1, 1, 900, 64);
  dv.dv = 128;
  add(dv);
  return v;
}

TEST(DecodeMma, AgreesWithTheOracleAtAnySplitCount) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"decode_mma"};
  auto run = [&](const KernelInfo& k, const GridCase& c, DType t) {
    const AttnProblem p = c.with_dtype(t);
    if (!k.supports(dev, p)) return;
    const AttnInputs in = random_inputs(p, c.seed, c.dist);
    Outcome o = judge(k, p, in);
    rep.add(k.name, c.id(t), o.pass, std::move(o.rec), o.why);
  };
  for (int splits : {1, 2, 3, 7, 64})
    for (const GridCase& c : kernel_grid())
      if (c.feature == "sk_edge" || c.feature == "window" || c.feature == "seqlens" || c.feature == "kv_offset" || c.feature == "gqa")
        run(find_variant("decode/splits=" + std::to_string(splits) + ",mma=on"), c, splits % 2 ? DType::f16 : DType::bf16);
  for (const GridCase& c : decode_mma_long_cases())
    for (DType t : {DType::f16, DType::bf16}) {
      run(find_variant("decode/mma=on"), c, t);
      for (int splits : {1, 3, 5}) run(find_variant("decode/splits=" + std::to_string(splits) + ",mma=on"), c, t);
    }
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// A query row's output does not depend on the rows that share its tensor-core tile: the GQA problem
// (a kv head's group of query heads as rows 0.. of one tile) gives bitwise the O and LSE of the same
// problem with every query head on a kv head of its own holding the same keys and values (one row
// per tile), at the same forced split count. Contiguous BSHD problems of the long cases and the grid's
// GQA cases that the kernel takes.
TEST(DecodeMma, AGroupsRowsGiveBitwiseTheirHeadsAlone) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"decode_mma_rows"};
  std::vector<GridCase> cases = decode_mma_long_cases();
  for (const GridCase& c : kernel_grid())
    if (c.feature == "gqa" || c.feature == "sk_edge") cases.push_back(c);
  for (const GridCase& c : cases)
    for (int splits : {1, 3}) {
      const DType t = splits == 1 ? DType::f16 : DType::bf16;
      const AttnProblem p = c.with_dtype(t);
      if (p.group() < 2 || !decode_mma_takes(p.d, p.dv, p.group(), p.sq, false) || p.softcap > 0 || !p.alibi_slopes.empty() ||
          p.k != Strides{} || p.v != Strides{})
        continue;
      AttnProblem alone = p;
      alone.hkv = p.hq;
      const AttnInputs in = random_inputs(p, c.seed, c.dist);
      AttnInputs ain{in.q, Tensor(in.k.dtype, alone.k_span()), Tensor(in.v.dtype, alone.v_span())};
      const Strides ks = p.k_strides(), vs = p.v_strides(), aks = alone.k_strides(), avs = alone.v_strides();
      const std::size_t es = dtype_size(in.k.dtype);
      for (int b = 0; b < p.batch; ++b)
        for (int j = 0; j < p.sk; ++j)
          for (int h = 0; h < p.hq; ++h) {
            std::memcpy(&ain.k.bytes[offset(aks, b, j, h, 0) * es], &in.k.bytes[offset(ks, b, j, p.kv_head(h), 0) * es], p.d * es);
            std::memcpy(&ain.v.bytes[offset(avs, b, j, h, 0) * es], &in.v.bytes[offset(vs, b, j, p.kv_head(h), 0) * es], p.dv * es);
          }
      const KernelInfo k = find_variant("decode/splits=" + std::to_string(splits) + ",mma=on");
      if (!k.supports(dev, p)) continue;
      const RunResult a = run_kernel(k, p, in), b = run_kernel(k, alone, ain);
      const bool same = a.out.o.bytes == b.out.o.bytes &&
                        std::memcmp(a.out.lse.data(), b.out.lse.data(), a.out.lse.size() * sizeof(float)) == 0;
      rep.add(k.name, c.id(t), same && a.clean() && b.clean(), {{"bitwise_equal", same}, {"run_findings", a.describe()}},
              same ? a.describe() + " / " + b.describe() : "differs from its heads alone");
    }
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

void add_unaligned_rows_comparisons(Report& rep, const DeviceInfo& dev, const KernelInfo* k);

// decode/mma=on's tiles filled element by element where K/V rows are not 16-byte chunks: the same
// tiles as cp.async's, so bitwise the aligned result (a strided batch and its contiguous element take
// the same kernel: the gate's BatchInvariant failed on the H100 while unaligned rows went to decode's
// split kernel, 2026-11-27 round 2).
TEST(DecodeMma, UnalignedRowsGiveBitwiseTheAlignedResult) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  const KernelInfo k = find_variant("decode/mma=on");
  Report rep{"decode_mma_unaligned"};
  add_unaligned_rows_comparisons(rep, dev, &k);
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// The wgmma kernel's persistent grid with few blocks: every block walks many row blocks of the grid's
// problems, so the Q buffer is reused, the K/V ring's positions and phases run on across row blocks
// and (batch, head) pairs, empty row blocks sit between full ones, V tails are zeroed more than once
// per block, and the consumers' turns continue from one row block to the next. Every grid case at
// 1 and 3 blocks; 2 and 7 blocks on the cases with several row blocks or uneven ones. The same for
// wgmma/carry=on where built (the cases it takes: d, dv <= 128, no soft-cap or ALiBi), whose consumers issue a row
// block's first S with the previous one's last P V at every boundary between row blocks with keys:
// within an item, between items, around empty row blocks (no carry there), across (batch, head)s.
// And for wgmma/l2ahead=on, whose producer walks with the same lookahead and prefetches the next row
// block (a hint: the loads into shared memory are the shipped ones), and wgmma/epilogue=pairs (the
// column-pair stores the shipped kernel had before its 16-byte ones), and wgmma/mask=visible (the mask
// from visible_range per row block, before the shipped affine one), wgmma/stages=4|5 (a deeper K/V
// ring: the stage and parity of every tile across row blocks at any block count) and wgmma/align=sector
// (box coordinates and O's columns shifted per row block, which a walk over (batch, head)s of both
// alignments changes mid-walk).
TEST(WgmmaWalk, AnyBlockCountAgrees) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"wgmma_blocks"};
  const std::vector<std::string> built = variant_names();
  for (const std::string variant : {"", "carry=on,", "l2ahead=on,", "epilogue=pairs,", "mask=visible,", "stages=4,", "stages=5,", "align=sector,"})
  for (int blocks : {1, 3, 2, 7}) {
    if (!variant.empty() && std::find(built.begin(), built.end(), "wgmma/" + variant.substr(0, variant.size() - 1)) == built.end())
      continue;  // carry=on is built only with -DFLASHPROBE_WGMMA_SCHEDULES=ON
    const KernelInfo k = variant.empty() ? wgmma_with_blocks(blocks)
                                         : find_variant("wgmma/" + variant + "blocks=" + std::to_string(blocks));
    for (const GridCase& c : kernel_grid()) {
      if (blocks == 2 || blocks == 7)
        if (c.feature != "multi_block" && c.feature != "seqlens" && c.feature != "empty_rows" && c.feature != "all_features" &&
            c.feature != "mid_sector")
          continue;
      const AttnProblem p = c.with_dtype(blocks == 3 ? DType::bf16 : DType::f16);
      if (!k.supports(dev, p)) continue;
      const AttnInputs in = random_inputs(p, c.seed, c.dist);
      Outcome o = judge(k, p, in);
      rep.add(k.name, c.id(p.dtype), o.pass, std::move(o.rec), o.why);
    }
  }
  if (rep.run == 0) GTEST_SKIP() << "wgmma runs on sm_90 only: " << dev.arch;
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// The shipped wgmma's 16-byte O stores (a transpose inside each lane quad, src/wgmma/wgmma_epilogue.h)
// change only how O reaches memory: on every grid case wgmma/epilogue=pairs takes, O and LSE are bitwise
// those of the column-pair stores, with the grid's own output layout (16-byte pieces where rows are
// 16-byte aligned) and with O's head stride dv + 2 (rows 4-byte aligned only: pairs in both).
TEST(WgmmaEpilogue, Vec16IsBitwiseTheColumnPairStores) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  const KernelInfo* w = find_kernel("wgmma");
  ASSERT_NE(w, nullptr);
  const KernelInfo v = find_variant("wgmma/epilogue=pairs");
  Report rep{"wgmma_epilogue_pairs"};
  for (const GridCase& c : kernel_grid())
    for (const bool padded : {false, true}) {
      AttnProblem p = c.with_dtype(c.seed % 2 ? DType::bf16 : DType::f16);
      if (padded) {
        if (!p.o.is_zero()) continue;
        const std::int64_t hs = p.dv + 2;
        p.o = Strides{std::int64_t{p.sq} * p.hq * hs, std::int64_t{p.hq} * hs, hs, 1};
      }
      if (!v.supports(dev, p)) continue;
      const AttnInputs in = random_inputs(p, c.seed, c.dist);
      const RunResult a = run_kernel(*w, p, in), b = run_kernel(v, p, in);
      const bool same = a.out.o.bytes == b.out.o.bytes &&
                        std::memcmp(a.out.lse.data(), b.out.lse.data(), a.out.lse.size() * sizeof(float)) == 0;
      rep.add(v.name, c.id(p.dtype) + (padded ? "/o_head_stride_dv+2" : ""), same && a.clean() && b.clean(),
              {{"bitwise_equal", same}, {"run_findings", b.describe()}}, same ? b.describe() : "O or LSE differ between the two stores");
    }
  if (rep.run == 0) GTEST_SKIP() << "wgmma runs on sm_90 only: " << dev.arch;
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// The shipped wgmma's affine mask (src/wgmma/wgmma_mask.h) changes how the consumers find the masked
// scores, not what they compute: on every grid case wgmma/mask=visible (the visible_range set-up)
// takes (every mask of the grid: causal both ways, windows, per-batch key counts, rows past sq,
// multi-block walks), O and LSE are bitwise the shipped wgmma's.
TEST(WgmmaMask, AffineIsBitwiseTheVisibleRangeMask) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  const KernelInfo* w = find_kernel("wgmma");
  ASSERT_NE(w, nullptr);
  const KernelInfo v = find_variant("wgmma/mask=visible");
  Report rep{"wgmma_mask_visible_bitwise"};
  for (const GridCase& c : kernel_grid())
    for (const DType dt : {DType::f16, DType::bf16}) add_bitwise_comparison(rep, dev, v, *w, c, dt);
  if (rep.run == 0) GTEST_SKIP() << "wgmma runs on sm_90 only: " << dev.arch;
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// decode reads aligned K/V rows as 16-byte vectors and other rows with 16-bit loads into the same
// lanes, feeding the same arithmetic: the same values stored off alignment (head stride d + 1) give
// bitwise the same O and LSE. Covers the fallback on every grid feature with contiguous K/V.
// Kernel k on every grid case with 16-byte rows against the same case with K/V rows one element longer
// (not 16-byte multiples): bitwise the same O and LSE.
void add_unaligned_rows_comparisons(Report& rep, const DeviceInfo& dev, const KernelInfo* k) {
  for (const GridCase& c : kernel_grid()) {
    const AttnProblem p = c.with_dtype(DType::bf16);
    if (!k->supports(dev, p) || p.d % 8 != 0 || p.dv % 8 != 0 || !p.k.is_zero() || !p.v.is_zero()) continue;
    AttnProblem u = p;
    u.k = Strides{std::int64_t{p.sk} * p.hkv * (p.d + 1), std::int64_t{p.hkv} * (p.d + 1), p.d + 1, 1};
    u.v = Strides{std::int64_t{p.sk} * p.hkv * (p.dv + 1), std::int64_t{p.hkv} * (p.dv + 1), p.dv + 1, 1};
    const AttnInputs in = random_inputs(p, c.seed, c.dist);
    AttnInputs uin{in.q, Tensor(p.dtype, u.k_span()), Tensor(p.dtype, u.v_span())};
    for (int b = 0; b < p.batch; ++b)
      for (int j = 0; j < p.sk; ++j)
        for (int h = 0; h < p.hkv; ++h) {
          for (int x = 0; x < p.d; ++x) uin.k.set(offset(u.k_strides(), b, j, h, x), in.k.get(offset(p.k_strides(), b, j, h, x)));
          for (int x = 0; x < p.dv; ++x) uin.v.set(offset(u.v_strides(), b, j, h, x), in.v.get(offset(p.v_strides(), b, j, h, x)));
        }
    const RunResult a = run_kernel(*k, p, in), b = run_kernel(*k, u, uin);
    const bool same = a.out.o.bytes == b.out.o.bytes &&
                      std::memcmp(a.out.lse.data(), b.out.lse.data(), a.out.lse.size() * sizeof(float)) == 0;
    rep.add(k->name, c.id(DType::bf16), same && b.clean(), {{"bitwise_equal", same}, {"run_findings", b.describe()}},
            same ? b.describe() : "element loads differ from vector loads");
  }
}

TEST(DecodeLoads, UnalignedRowsGiveBitwiseTheAlignedResult) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  const KernelInfo* k = find_kernel("decode");
  ASSERT_NE(k, nullptr);
  Report rep{"decode_unaligned"};
  add_unaligned_rows_comparisons(rep, dev, k);
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " failing case(s), first: " << rep.failures.front();
}

// Two runs of the same kernel on the same inputs give the same bits (O and LSE).
TEST(Determinism, TwoRunsAreBitwiseEqual) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"determinism"};
  for (auto& k : kernels())
    for (std::size_t i = 0; i < kernel_grid().size(); i += 7) {  // every 7th case: all features, a fraction of the time
      const GridCase& c = kernel_grid()[i];
      const AttnProblem p = c.with_dtype(DType::bf16);
      if (!k.supports(dev, p)) continue;
      const AttnInputs in = random_inputs(p, c.seed, c.dist);
      const RunResult a = run_kernel(k, p, in), b = run_kernel(k, p, in);
      const bool same = a.out.o.bytes == b.out.o.bytes &&
                        std::memcmp(a.out.lse.data(), b.out.lse.data(), a.out.lse.size() * sizeof(float)) == 0;
      rep.add(k.name, c.id(DType::bf16), same, {{"bitwise_equal", same}}, "two runs differ");
    }
  EXPECT_GT(rep.run, 0);
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.front();
}

// The dispatcher's choice on this device runs and agrees (select() never picks code the binary lacks).
TEST(Dispatch, SelectedKernelRunsOnThisDevice) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  EXPECT_EQ(binary_runs_on(binary_targets(), dev), "") << "this test binary has no code for " << dev.arch;
  Report rep{"dispatch"};
  for (std::size_t i = 0; i < kernel_grid().size(); i += 5) {
    const GridCase& c = kernel_grid()[i];
    const AttnProblem p = c.with_dtype(DType::f16);
    const Selection s = select(dev, p);
    ASSERT_TRUE(s) << c.id(DType::f16) << ": " << s.describe();
    const AttnInputs in = random_inputs(p, c.seed, c.dist);
    Outcome o = judge(*s.kernel, p, in);
    o.rec["selection"] = s.describe();
    rep.add(s.kernel->name, c.id(DType::f16), o.pass, std::move(o.rec), o.why);
  }
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.front();
}

// KV append then attend: the append writes exactly [offset, offset + s_new) of each batch's cache;
// attention over the appended cache — whose slots past keys(b) hold NaN bits — agrees with the
// oracle on the full sequence and is bitwise equal to the same kernel on the full K/V (so no kernel
// reads a key past keys(b) into its result).
TEST(KvAppend, AppendThenAttendEqualsFullSequence) {
  FP_SKIP_WITHOUT_GPU();
  Report rep{"kv_append"};
  struct Cfg {
    int s_new;
    std::vector<int> offsets;
    int s_cache;
    DType t;
  };
  const std::vector<Cfg> cfgs{{1, {7, 7}, 8, DType::f16},     {1, {0, 99}, 100, DType::bf16},
                              {7, {90, 3}, 97, DType::f16},   {40, {60, 0}, 100, DType::bf16},
                              {3, {5, 5}, 20, DType::f32},    {64, {65, 1}, 129, DType::f16}};
  for (const Cfg& cfg : cfgs) {
    KvAppendProblem a;
    a.batch = 2;
    a.hkv = 2;
    a.d = a.dv = 64;
    a.s_new = cfg.s_new;
    a.s_cache = cfg.s_cache;
    a.dtype = cfg.t;
    a.offsets = cfg.offsets;
    // The full sequence the cache should end up holding, as an attention problem over the cache.
    AttnProblem p;
    p.batch = 2;
    p.hq = 4;
    p.hkv = 2;
    p.sq = cfg.s_new;
    p.sk = cfg.s_cache;
    p.d = p.dv = 64;
    p.dtype = p.out_dtype = cfg.t;
    p.causal = Causal::bottom_right;
    p.seqlens_k = {cfg.offsets[0] + cfg.s_new, cfg.offsets[1] + cfg.s_new};
    const AttnInputs full = random_inputs(p, 4242 + static_cast<std::uint64_t>(cfg.s_new));
    // The cache before: [0, offset) as in full, [offset, s_cache) NaN bits. Expected after the
    // append: [0, offset + s_new) as in full, the slots past keys(b) still NaN bits.
    Tensor kc = full.k, vc = full.v, kn(cfg.t, std::int64_t{2} * cfg.s_new * 2 * 64), vn = kn;
    const Strides cs = a.k_cache_strides(), ns = a.k_new_strides();
    const std::size_t es = dtype_size(cfg.t);
    for (int b = 0; b < 2; ++b)
      for (int t = a.offset(b); t < cfg.s_cache; ++t)
        for (int h = 0; h < 2; ++h)
          for (int x = 0; x < 64; ++x) {
            const auto src = offset(cs, b, t, h, x);
            if (t < a.offset(b) + cfg.s_new) {
              kn.set(offset(ns, b, t - a.offset(b), h, x), full.k.get(src));
              vn.set(offset(ns, b, t - a.offset(b), h, x), full.v.get(src));
            }
            std::memset(kc.bytes.data() + src * es, 0xFF, es);
            std::memset(vc.bytes.data() + src * es, 0xFF, es);
          }
    Tensor k_expect = full.k, v_expect = full.v;
    for (int b = 0; b < 2; ++b)
      for (int t = a.offset(b) + cfg.s_new; t < cfg.s_cache; ++t)
        for (int h = 0; h < 2; ++h)
          for (int x = 0; x < 64; ++x) {
            std::memset(k_expect.bytes.data() + offset(cs, b, t, h, x) * es, 0xFF, es);
            std::memset(v_expect.bytes.data() + offset(cs, b, t, h, x) * es, 0xFF, es);
          }
    const KvAppendResult r = run_kv_append(a, kn, vn, kc, vc);
    // (appended piece by piece: GCC 12's -Wrestrict misfires on "literal" + std::string&&)
    std::string cid = "append_sn";
    cid.append(std::to_string(cfg.s_new)).append("_off").append(std::to_string(cfg.offsets[0])).append(",");
    cid.append(std::to_string(cfg.offsets[1])).append("_").append(dtype_name(cfg.t));
    const bool cache_ok = r.k_cache.bytes == k_expect.bytes && r.v_cache.bytes == v_expect.bytes && r.guard_damage.empty();
    rep.add("kv_append", cid, cache_ok, {{"cache_equals_full", cache_ok}}, "cache after append differs from the full K/V or guard damage");
    // Attend over the appended cache with every kernel that supports the problem.
    const DeviceInfo dev = require_device();
    for (auto& k : kernels()) {
      if (!k.supports(dev, p)) continue;
      const AttnInputs cached{full.q, r.k_cache, r.v_cache};
      const RunResult on_cache = run_kernel(k, p, cached);
      const RunResult direct = run_kernel(k, p, full);
      const oracle::CheckResult c = oracle::check(p, full, on_cache.out);  // the oracle sees no NaN slots
      const bool same = direct.out.o.bytes == on_cache.out.o.bytes &&
                        std::memcmp(direct.out.lse.data(), on_cache.out.lse.data(), direct.out.lse.size() * 4) == 0;
      nlohmann::json rec = c.to_json();
      rec["bitwise_equal_to_full_sequence"] = same;
      rec["run_findings"] = on_cache.describe();
      std::string why = c.pass ? "" : c.summary();
      if (!same) why += " (differs from the kernel on the full sequence: it read a key past keys(b))";
      if (!on_cache.clean()) why.append(" ").append(on_cache.describe());
      rep.add(k.name, cid + ":" + p.id(), c.pass && same && on_cache.clean(), std::move(rec), why);
    }
  }
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.front();
}

// Every mutant must fail at least one case of the grid; the first killing case is printed.
TEST(Mutants, EveryMutantIsKilledByTheGrid) {
  FP_SKIP_WITHOUT_GPU();
  const DeviceInfo dev = require_device();
  Report rep{"mutants"};
  std::vector<std::string> survivors;
  for (const Mutant& m : mutants()) {
    std::string killer, why;
    int tried = 0;
    for (const GridCase& c : kernel_grid()) {
      for (DType t : dtypes_for(m.meta.kernel)) {
        const AttnProblem p = c.with_dtype(t);
        if (!m.kernel.supports(dev, p)) continue;
        ++tried;
        const AttnInputs in = random_inputs(p, c.seed, c.dist);
        Outcome o;
        try {
          o = judge(m.kernel, p, in);
        } catch (const GpuError& e) {  // a mutant that faults is killed too (the context may be gone after this)
          o.pass = false;
          o.why = e.what();
        }
        if (!o.pass) {
          killer = c.id(t);
          why = o.why;
          break;
        }
      }
      if (!killer.empty()) break;
    }
    std::cout << (killer.empty() ? "SURVIVED " : "killed   ") << m.meta.name << " (" << m.meta.kernel << ", " << tried
              << " case(s) tried)" << (killer.empty() ? "" : " by " + killer + ": " + why.substr(0, 200)) << "\n";
    nlohmann::json rec{{"mutant", m.meta.name},       {"base_kernel", m.meta.kernel}, {"killed", !killer.empty()},
                       {"killed_by", killer},         {"why", why},                   {"cases_tried", tried},
                       {"mirrors", m.meta.mirrors},   {"must_be_killed_by", m.meta.killed_by}};
    // For the report a killed mutant is a "pass" of this test.
    rep.add(m.kernel.name, killer.empty() ? "(none)" : killer, !killer.empty(), rec, "survived the whole grid: " + m.meta.killed_by);
    // A race need not show in the output on a given GPU run; mutants whose killer is the race
    // detector are killed by `compute-sanitizer --tool racecheck` on SanitizeMutant.* instead
    // (scripts/gpu/run-all sanitize asserts that), and are not counted as survivors here.
    if (killer.empty() && m.meta.killed_by.find("racecheck") != std::string::npos)
      std::cout << "  -> delegated to compute-sanitizer racecheck (test_kernels_sanitize SanitizeMutant.*)\n";
    else if (killer.empty() && !m.meta.grid_kills)
      std::cout << "  -> no grid case shows it: the property gate must kill it (test_mutation, " << m.meta.killed_by << ")\n";
    else if (killer.empty())
      survivors.push_back(m.meta.name);
  }
  EXPECT_TRUE(survivors.empty()) << survivors.size() << " mutant(s) survived, first: " << survivors.front();
}

}  // namespace
}  // namespace flashprobe::kernels
