// The benchmark grid's contract (ids unique, groups complete, FLOP model) and custom problems
// (bench --problem): exact visible-pair FLOPs under masks, windows and per-batch key counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../common/temp_file.h"
#include "bench/bench_grid.h"
#include "flashprobe/core/error.h"

namespace fb = flashprobe::bench;
using flashprobe::AttnProblem;
using flashprobe::Causal;

using flashprobe::testing::write_temp_file;

TEST(BenchGrid, IdsAreUniqueAndGroupsComplete) {
  const auto g = fb::bench_grid(false);
  std::set<std::string> ids;
  int prefill = 0, whisper = 0, decode = 0;
  for (const auto& c : g) {
    EXPECT_TRUE(ids.insert(c.id()).second) << c.id();
    prefill += c.group == "prefill";
    whisper += c.group == "whisper";
    decode += c.group == "decode";
    if (c.group == "prefill") EXPECT_EQ(static_cast<long>(c.p.batch) * c.p.sq, 16384) << c.id();
  }
  EXPECT_EQ(prefill, 2 * 2 * 2 * 6);
  EXPECT_EQ(whisper, 4);
  EXPECT_EQ(decode, 2 * 2 * 6);
  EXPECT_LT(fb::bench_grid(true).size(), g.size());
}

TEST(BenchGrid, GridFlopsHalveUnderACausalMask) {
  fb::BenchCase c{"prefill", AttnProblem{}};
  c.p.batch = 2, c.p.hq = c.p.hkv = 4, c.p.sq = c.p.sk = 256, c.p.d = c.p.dv = 64;
  const double full = c.flops();
  EXPECT_DOUBLE_EQ(full, 4.0 * 2 * 4 * 256 * 256 * 64);
  c.p.causal = Causal::bottom_right;
  EXPECT_DOUBLE_EQ(c.flops(), full / 2);
}

// d != dv: S = Q K^T costs 2 d and O = P V 2 dv per (query, key) pair.
TEST(BenchGrid, GridFlopsCountDAndDvApart) {
  fb::BenchCase c{"headdim", AttnProblem{}};
  c.p.batch = 1, c.p.hq = c.p.hkv = 2, c.p.sq = c.p.sk = 128, c.p.d = 192, c.p.dv = 128;
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 2 * 128 * 128 * (192 + 128));
}

// The headdim group: every multiple of 8 up to 256 and d != dv, both dtypes and masks, never in the
// default grid.
TEST(BenchGrid, HeadDimGroupCoversEveryTensorCoreHeadDim) {
  const auto h = fb::headdim_grid();
  std::set<std::string> ids;
  std::set<std::pair<int, int>> dims;
  for (const auto& c : h) {
    EXPECT_EQ(c.group, "headdim");
    EXPECT_TRUE(ids.insert(c.id()).second) << c.id();
    dims.insert({c.p.d, c.p.dv});
  }
  for (int d = 8; d <= 256; d += 8) EXPECT_TRUE(dims.count({d, d})) << "d=" << d;
  EXPECT_TRUE(dims.count({192, 128}));
  EXPECT_EQ(h.size(), 2u * 2u * dims.size());
  for (bool quick : {false, true}) {
    for (const auto& c : fb::bench_grid(quick)) EXPECT_NE(c.group, "headdim") << c.id();
  }
}

// The metric: TFLOP/s at (d, dv) over the same kernel's at its tile class, same dtype and mask; the
// class itself, kernels without classes, and cases whose class was not timed get no row.
TEST(BenchGrid, HeadDimRatiosCompareWithTheTileClass) {
  const auto rec = [](const std::string& kernel, int d, int dv, bool causal, double tflops, const char* group = "headdim") {
    AttnProblem p;
    p.batch = 4, p.hq = p.hkv = 16, p.sq = p.sk = 4096, p.d = d, p.dv = dv;
    p.causal = causal ? Causal::bottom_right : Causal::none;
    return nlohmann::json{{"kernel", kernel}, {"group", group}, {"problem", p}, {"tflops", tflops}};
  };
  const nlohmann::json results = nlohmann::json::array({
      rec("mma", 64, 64, false, 300), rec("mma", 40, 40, false, 240), rec("mma", 40, 40, true, 100),  // causal 64 untimed
      rec("mma/classes=coarse", 256, 256, false, 400), rec("mma/classes=coarse", 192, 128, false, 380), rec("wgmma", 128, 128, false, 500),
      rec("wgmma", 72, 72, false, 400), rec("wgmma", 64, 64, false, 350), rec("tiled", 40, 40, false, 10),
      rec("mma", 48, 48, false, 290, "prefill"), rec("wgmma", 192, 128, false, 400), rec("wgmma", 160, 128, false, 380)});
  const auto r = fb::headdim_ratios(results);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].kernel, "mma");
  EXPECT_EQ(r[0].d, 40);
  EXPECT_EQ(r[0].class_d, 64);
  EXPECT_EQ(r[0].class_dv, 64);
  EXPECT_DOUBLE_EQ(r[0].ratio, 0.8);
  EXPECT_FALSE(r[0].ok());
  EXPECT_EQ(r[1].kernel, "mma/classes=coarse");  // its ladder has no 192 class: 192/128 compares with 256
  EXPECT_EQ(r[1].d, 192);
  EXPECT_EQ(r[1].dv, 128);
  EXPECT_EQ(r[1].class_d, 256);
  EXPECT_DOUBLE_EQ(r[1].ratio, 0.95);
  EXPECT_TRUE(r[1].ok());
  EXPECT_EQ(r[2].kernel, "wgmma");
  EXPECT_EQ(r[2].class_d, 128);  // wgmma's classes: 64/64, 128/128, 192/128: d = 72 compares with 128
  EXPECT_DOUBLE_EQ(r[2].ratio, 0.8);
  EXPECT_EQ(r[3].class_d, 192);  // 160/128 runs in wgmma's 192/128 class
  EXPECT_EQ(r[3].class_dv, 128);
  EXPECT_DOUBLE_EQ(r[3].ratio, 0.95);
  // mma compares with its own ladder's class (the fine one, kernels::mma_nvidia_class): d = 136 with
  // 160, not 256.
  const nlohmann::json fine = nlohmann::json::array({rec("mma", 160, 160, false, 300), rec("mma", 256, 256, false, 400),
                                                     rec("mma", 136, 136, false, 270)});
  const auto rf = fb::headdim_ratios(fine);
  ASSERT_EQ(rf.size(), 1u);
  EXPECT_EQ(rf[0].class_d, 160);
  EXPECT_DOUBLE_EQ(rf[0].ratio, 0.9);
}

// Custom problems count the visible pairs: a causal 4 x 4 problem has 1 + 2 + 3 + 4 = 10.
// bench --backward: FlashAttention's 2.5x-forward FLOP convention (causal halving included) and the
// traffic floor of inputs, outputs and their gradients.
TEST(BenchGrid, BackwardCountsTwoAndAHalfForwardsAndEveryGradient) {
  fb::BenchCase c{"prefill", AttnProblem{}};
  c.p.batch = 2, c.p.hq = 4, c.p.hkv = 2, c.p.sq = c.p.sk = 256, c.p.d = c.p.dv = 64;
  EXPECT_DOUBLE_EQ(c.backward_flops(), 2.5 * 4.0 * 2 * 4 * 256 * 256 * 64);
  c.p.causal = Causal::bottom_right;
  EXPECT_DOUBLE_EQ(c.backward_flops(), 2.5 * 2.0 * 2 * 4 * 256 * 256 * 64);
  const double q = 2.0 * 256 * 4 * 64 * 2, kv = 2.0 * 256 * 2 * 128 * 2, o = q, lse = 2.0 * 4 * 256 * 4;
  EXPECT_DOUBLE_EQ(c.backward_bytes(), 2 * (q + kv) + 2 * o + lse);
  EXPECT_DOUBLE_EQ(c.bytes(), q + kv + o + lse);
}

TEST(BenchGrid, CustomFlopsCountVisiblePairs) {
  fb::BenchCase c{"custom", AttnProblem{}};
  c.p.batch = 1, c.p.hq = c.p.hkv = 3, c.p.sq = c.p.sk = 4, c.p.d = 64, c.p.dv = 32;
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * (64 + 32) * 3 * 16);
  c.p.causal = Causal::bottom_right;
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 96 * 3 * 10);
  // Decode-like: one query row at the bottom right sees every key.
  c.p.sq = 1, c.p.sk = 100;
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 96 * 3 * 100);
  // A left window of 2: rows see at most 3 keys; per-batch key counts cut batch 1 to 40 keys.
  c.p.batch = 2, c.p.sq = 5, c.p.sk = 50, c.p.window_left = 2, c.p.seqlens_k = {50, 40};
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 96 * 3 * (2 * 5 * 3));
}

TEST(BenchGrid, CustomCasesReadObjectsAndArrays) {
  const std::string one = R"({"batch": 2, "hq": 8, "hkv": 2, "sq": 128, "sk": 512, "d": 128, "dtype": "bf16"})";
  const auto a = write_temp_file("one.json", one);
  const auto b = write_temp_file("sweep.json", "[" + one + R"(, {"batch": 1, "hq": 4, "hkv": 4, "sq": 1, "sk": 4096, "d": 64, "causal": "bottom_right"}])");
  const auto v = fb::custom_cases({a, b});
  ASSERT_EQ(v.size(), 3u);
  for (const auto& c : v) EXPECT_EQ(c.group, "custom");
  EXPECT_EQ(v[0].p.hkv, 2);
  EXPECT_EQ(v[2].p.sk, 4096);
  EXPECT_EQ(v[2].p.causal, Causal::bottom_right);
  EXPECT_EQ(v[1].id(), "custom:" + v[0].p.id());
}

TEST(BenchGrid, CustomCasesNameTheBadEntry) {
  const auto bad = write_temp_file("bad.json", R"([{"batch": 1, "hq": 2, "hkv": 2, "sq": 8, "sk": 8, "d": 64}, {"batch": 0}])");
  try {
    fb::custom_cases({bad});
    FAIL() << "no error";
  } catch (const flashprobe::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json[1]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fb::custom_cases({write_temp_file("scalar.json", "42")}), flashprobe::UsageError);
}
