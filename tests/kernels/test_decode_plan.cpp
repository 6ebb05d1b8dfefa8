// decode's work decomposition (flashprobe/kernels/decode_plan.h) is pure host code: lanes per key,
// rows per block, keys per step, the split count from the SM count and the keys per split.
#include <gtest/gtest.h>

#include <algorithm>

#include "flashprobe/core/device_info.h"
#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/registry.h"
#include "kernel_grid.h"

namespace flashprobe::kernels {
namespace {

using testing::make_problem;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

TEST(DecodePlan, LanesPerKeyCoverTheLongerRowIn16ByteChunks) {
  EXPECT_EQ(decode_geometry(128, 128, 1, 1).lanes_per_key, 16);
  EXPECT_EQ(decode_geometry(64, 64, 1, 1).lanes_per_key, 8);
  EXPECT_EQ(decode_geometry(256, 256, 1, 1).lanes_per_key, 32);
  EXPECT_EQ(decode_geometry(80, 80, 1, 1).lanes_per_key, 16);   // 10 chunks: 6 lanes idle
  EXPECT_EQ(decode_geometry(59, 111, 1, 1).lanes_per_key, 16);  // dv decides: 14 chunks
  EXPECT_EQ(decode_geometry(8, 1, 1, 1).lanes_per_key, 1);
  EXPECT_EQ(decode_geometry(1, 1, 1, 1).lanes_per_key, 1);
  for (int d = 1; d <= kDecodeMaxDim; ++d) {
    const int g = decode_geometry(d, 1, 1, 1).lanes_per_key;
    EXPECT_GE(g * kDecodeVecElems, d);
    EXPECT_LE(g, 32) << "a key row must fit in one wave of 32";
    EXPECT_EQ(g & (g - 1), 0) << "power of two (the shuffle butterfly)";
  }
}

TEST(DecodePlan, RowsOfOneKvHeadShareABlock) {
  // MHA decode: one row per block, 4 keys per key group and step.
  DecodeGeometry g = decode_geometry(128, 128, 1, 1);
  EXPECT_EQ(g.rows_per_block, 1);
  EXPECT_EQ(g.row_tiles, 1);
  EXPECT_EQ(g.keys_per_step, 8 * 4);
  // GQA group 4: the four heads in one block, one key per key group and step.
  g = decode_geometry(128, 128, 4, 1);
  EXPECT_EQ(g.rows_per_block, 4);
  EXPECT_EQ(g.row_tiles, 1);
  EXPECT_EQ(g.keys_per_step, 8);
  // Two query positions of one head; a group of 3 rounds up to 4 rows (one padding row).
  EXPECT_EQ(decode_geometry(64, 64, 1, 2).rows_per_block, 2);
  EXPECT_EQ(decode_geometry(64, 64, 1, 2).keys_per_step, 16 * 2);
  EXPECT_EQ(decode_geometry(64, 64, 3, 1).rows_per_block, 4);
  // More rows than a block holds: tiles of kDecodeMaxRowsPerBlock.
  // Soft-cap or ALiBi: one row per block whatever the group.
  EXPECT_EQ(decode_geometry(128, 128, 4, 1, true).rows_per_block, 1);
  EXPECT_EQ(decode_geometry(128, 128, 4, 1, true).row_tiles, 4);
  EXPECT_EQ(decode_geometry(128, 128, 4, 1, true).keys_per_step, 32);
  g = decode_geometry(64, 64, 6, 1);
  EXPECT_EQ(g.rows_per_block, kDecodeMaxRowsPerBlock);
  EXPECT_EQ(g.row_tiles, 2);
  EXPECT_EQ(decode_geometry(128, 128, 64, 8).row_tiles, 64 * 8 / kDecodeMaxRowsPerBlock);
  for (int rows : {1, 2, 4}) EXPECT_EQ(decode_unroll(rows) * rows, kDecodeMaxRowsPerBlock);
}

TEST(DecodePlan, BenchmarkShapesOnAnH100) {
  // b1 h32 d128: 32 kv heads x 16 splits = 512 blocks, one wave of the 4 x 132 resident blocks.
  const AttnProblem p = make_problem(1, 32, 32, 1, 8192, 128);
  EXPECT_EQ(decode_splits(p, 132), 16);
  EXPECT_EQ(decode_chunk(8192, 16, 32), 512);
  const AttnProblem l = make_problem(1, 32, 32, 1, 32768, 128);
  EXPECT_EQ(decode_splits(l, 132), 16);  // not 17: 544 blocks would leave 16 to run alone
  EXPECT_EQ(decode_chunk(32768, 16, 32), 2048);
  // The batch does not change the split (bitwise batch invariance); 8 elements run 8 waves.
  EXPECT_EQ(decode_splits(make_problem(8, 32, 32, 1, 32768, 128), 132), 16);
  // GQA 32/8: one block serves the 4 heads of a kv head: 8 blocks per split, 3 resident per SM.
  EXPECT_EQ(decode_splits(make_problem(1, 32, 8, 1, 32768, 128), 132), 49);
  // A soft-cap runs one row per block: 32 blocks per split again.
  AttnProblem cap = make_problem(1, 32, 8, 1, 32768, 128);
  cap.softcap = 30;
  EXPECT_EQ(decode_splits(cap, 132), 16);
}

// decode/mma=on: the rows of one kv head in one 16-row tensor-core tile, d and dv up to 128, no score
// transform; its split count fills one wave of 2 blocks per SM at batch 1 (hkv blocks per split) but
// gives every split at least 4 tiles of 64 keys, each a whole number of tiles, whatever the batch.
TEST(DecodePlan, TheTensorCorePlanTakesGroupsOfUpTo16RowsAndWholeTiles) {
  EXPECT_TRUE(decode_mma_takes(128, 128, 4, 1, false));
  EXPECT_TRUE(decode_mma_takes(128, 128, 16, 1, false));
  EXPECT_TRUE(decode_mma_takes(64, 64, 8, 2, false));
  EXPECT_TRUE(decode_mma_takes(128, 128, 1, 8, false));
  EXPECT_FALSE(decode_mma_takes(128, 128, 8, 4, false)) << "32 rows";
  EXPECT_FALSE(decode_mma_takes(128, 128, 32, 1, false));
  EXPECT_FALSE(decode_mma_takes(136, 128, 4, 1, false));
  EXPECT_FALSE(decode_mma_takes(128, 256, 4, 1, false));
  EXPECT_FALSE(decode_mma_takes(128, 128, 4, 1, true)) << "soft-cap or ALiBi";
  // h32/8 d128 on 132 SMs: at most 264 / 8 = 33 splits, at least 256 keys each.
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 1024, 128), 132), 4);
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 4096, 128), 132), 16);
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 16384, 128), 132), 32);
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 32768, 128), 132), 32) << "33 wanted: 16 tiles each give 32";
  EXPECT_EQ(decode_mma_splits(make_problem(8, 32, 8, 1, 32768, 128), 132), 32) << "independent of the batch";
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 4, 1, 32768, 128), 132), 64) << "h32/4: 66 wanted, 8 tiles each give 64";
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 300, 128), 132), 1) << "5 tiles: one split of at least 4";
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 100, 128), 132), 1);
  EXPECT_EQ(decode_mma_splits(make_problem(1, 32, 8, 1, 0, 128), 132), 1);
  for (int sk : {1, 63, 64, 65, 511, 513, 4097, 30000, 65536})
    for (int hkv : {1, 2, 8, 32}) {
      const AttnProblem p = make_problem(1, 32, hkv, 1, sk, 64);
      const int n = decode_mma_splits(p, 132), tiles = ceil_div(sk, kDecodeMmaKeysPerTile);
      EXPECT_GE(n, 1);
      if (tiles >= 1 && hkv >= 2) {
        EXPECT_LE(n * hkv, kDecodeMmaBlocksPerSm * 132) << sk << " " << hkv;
        EXPECT_LE(n, std::max(tiles / kDecodeMmaMinTilesPerSplit, 1)) << sk << " " << hkv;
        EXPECT_EQ(decode_chunk(sk, n, kDecodeMmaKeysPerTile) % kDecodeMmaKeysPerTile, 0) << sk << " " << hkv;
        EXPECT_EQ(ceil_div(sk, decode_chunk(sk, n, kDecodeMmaKeysPerTile)), n) << "no empty split: " << sk << " " << hkv;
      }
    }
  // Where the tensor-core kernel does not take the problem, decode's split kernel runs with its plan.
  const AttnProblem group32 = make_problem(1, 32, 1, 1, 4096, 128);
  EXPECT_EQ(decode_mma_splits(group32, 132), decode_plan_splits(group32, 132));
}

TEST(DecodePlan, SplitsNeverExceedKeyStepsAndEverySplitGetsWholeSteps) {
  for (int sms : {1, 2, 20, 80, 108, 132, 228, 304})
    for (int hkv : {1, 2, 8, 32})
      for (int group : {1, 2, 3, 4, 8})
        for (int sq : {1, 3, 8})
          for (int d : {8, 40, 64, 111, 128, 256})
            for (int sk : {0, 1, 2, 3, 31, 32, 33, 100, 1000, 4096, 32768, 100003}) {
              const AttnProblem p = make_problem(1, hkv * group, hkv, sq, sk, d);
              const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group(), p.sq);
              const int steps = std::max(ceil_div(sk, g.keys_per_step), 1);
              const int splits = decode_splits(p, sms);
              SCOPED_TRACE(p.id() + " sms=" + std::to_string(sms) + " splits=" + std::to_string(splits));
              ASSERT_GE(splits, 1);
              ASSERT_LE(splits, steps);
              // One batch element's blocks fit in one wave, and fill a good part of it unless every
              // step already has its own split.
              const long long blocks = static_cast<long long>(splits) * hkv * g.row_tiles;
              const long long slots = static_cast<long long>(decode_blocks_per_sm(g.rows_per_block)) * sms;
              if (splits > 1) {
                EXPECT_LE(blocks, slots);
              }
              if (splits < steps && hkv * g.row_tiles <= slots) {
                EXPECT_GE(4 * blocks, slots);
              }
              // Whole steps per split, no split empty, every key in a split.
              const int chunk = decode_chunk(sk, splits, g.keys_per_step);
              if (sk > 0) {
                EXPECT_EQ(chunk % g.keys_per_step, 0);
                EXPECT_EQ(ceil_div(sk, chunk), splits);
              }
              // Independent of the batch size.
              AttnProblem big = p;
              big.batch = 7;
              EXPECT_EQ(decode_splits(big, sms), splits);
            }
}

// decode/fused=on's plan: half the resident blocks. h32 d128 on 132 SMs: 8 splits at every Sk of the
// benchmark (1k-32k) and every batch; batch 1 walks one split per block (256 blocks), batch 8 walks all
// 8 (one block per head, 256 blocks); every split is walked by exactly one block; the batch's blocks
// fit half a wave whenever one split per row tile does.
TEST(DecodePlan, TheFusedPlanFillsHalfTheResidentBlocks) {
  for (int sk : {1024, 2048, 4096, 8192, 32768})
    for (int batch : {1, 8}) EXPECT_EQ(decode_fused_splits(make_problem(batch, 32, 32, 1, sk, 128), 132), 8) << sk;
  EXPECT_EQ(decode_fused_splits(make_problem(1, 32, 32, 1, 64, 128), 132), 2) << "never more splits than key steps";
  EXPECT_EQ(decode_walk(make_problem(1, 32, 32, 1, 2048, 128), 8, 132), 1);
  EXPECT_EQ(decode_walk(make_problem(8, 32, 32, 1, 2048, 128), 8, 132), 8);
  EXPECT_EQ(decode_walk(make_problem(4, 32, 32, 1, 2048, 128), 8, 132), 4);
  EXPECT_EQ(decode_walk(make_problem(1, 32, 32, 1, 2048, 128), 16, 132), 2);
  EXPECT_EQ(decode_walk_blocks(16, 8), 2);
  EXPECT_EQ(decode_walk_blocks(7, 3), 3);  // 3 + 3 + 1
  for (int sms : {1, 20, 132, 304})
    for (int batch : {1, 2, 3, 8, 64})
      for (int hkv : {1, 8, 32})
        for (int group : {1, 4})
          for (int splits : {1, 2, 3, 7, 16, 49, 64}) {
            const AttnProblem p = make_problem(batch, hkv * group, hkv, 1, 4096, 128);
            const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group(), p.sq);
            const int walk = decode_walk(p, splits, sms);
            SCOPED_TRACE(p.id() + " sms=" + std::to_string(sms) + " splits=" + std::to_string(splits) + " walk=" + std::to_string(walk));
            ASSERT_GE(walk, 1);
            ASSERT_LE(walk, splits);
            const int blocks = decode_walk_blocks(splits, walk);
            // No block without a split, and the last block's splits are the rest.
            EXPECT_GT(splits - (blocks - 1) * walk, 0);
            const long long tiles = static_cast<long long>(batch) * hkv * g.row_tiles;
            const long long half = std::max(static_cast<long long>(decode_blocks_per_sm(g.rows_per_block)) * sms / 2, 1LL);
            if (tiles <= half) {
              EXPECT_LE(blocks * tiles, half) << "the batch's blocks fit half a wave";
            } else {
              EXPECT_EQ(walk, splits) << "more row tiles than half a wave: one block per row tile";
            }
            // The largest walk that fits: one split fewer per block would need more blocks.
            if (walk > 1 && tiles <= half) {
              EXPECT_GT(decode_walk_blocks(splits, walk - 1) * tiles, half);
            }
            // The fused split count: independent of the batch, within the key steps, half a wave.
            const int fs = decode_fused_splits(p, sms);
            AttnProblem one = p;
            one.batch = 1;
            EXPECT_EQ(fs, decode_fused_splits(one, sms));
            EXPECT_GE(fs, 1);
            EXPECT_LE(fs, decode_splits(p, sms));
          }
}

// decode's plan: half the resident blocks for blocks of one row (h32/32 d128 and d64 on an H100: 8
// splits, 256 blocks at batch 1), one full wave for blocks of several rows (GQA h32/8: 49 splits at
// Sk 32768, 392 blocks; 4 rows per block, 3 resident per SM); a score transform runs one row per
// block, so the half wave.
TEST(DecodePlan, ThePlanHalvesTheWaveForOneRowBlocksOnly) {
  for (int sk : {1024, 4096, 32768}) {
    EXPECT_EQ(decode_plan_splits(make_problem(1, 32, 32, 1, sk, 128), 132), 8) << sk;
    EXPECT_EQ(decode_plan_splits(make_problem(8, 32, 32, 1, sk, 64), 132), 8) << sk;
  }
  EXPECT_EQ(decode_plan_splits(make_problem(1, 32, 8, 1, 32768, 128), 132), 49);
  EXPECT_EQ(decode_plan_splits(make_problem(1, 32, 4, 1, 4096, 128), 132), 47);
  AttnProblem cap = make_problem(1, 32, 8, 1, 32768, 128);
  cap.softcap = 30;
  EXPECT_EQ(decode_plan_splits(cap, 132), 8);
  for (int sms : {1, 20, 132, 304})
    for (int hkv : {1, 8, 32})
      for (int group : {1, 2, 4})
        for (int sq : {1, 2})
          for (int sk : {1, 100, 4096, 32768}) {
            const AttnProblem p = make_problem(1, hkv * group, hkv, sq, sk, 128);
            const bool one_row = decode_geometry(p.d, p.dv, p.group(), p.sq).rows_per_block == 1;
            EXPECT_EQ(decode_plan_splits(p, sms), one_row ? decode_fused_splits(p, sms) : decode_splits(p, sms)) << p.id() << " sms=" << sms;
            AttnProblem big = p;
            big.batch = 8;
            EXPECT_EQ(decode_plan_splits(big, sms), decode_plan_splits(p, sms)) << "independent of the batch";
          }
}

TEST(DecodePlan, ForcedSplitCountsKeepTheirBorders) {
  // Rounding 34 keys per split up to 64 would leave the third split empty: the chunk stays 34.
  EXPECT_EQ(decode_chunk(100, 3, 64), 34);
  EXPECT_EQ(decode_chunk(100, 2, 64), 64);  // 50 -> 64 still gives 2 splits
  EXPECT_EQ(decode_chunk(100, 64, 64), 2);  // more splits than keys / 2: the last 14 are empty
  EXPECT_EQ(decode_chunk(5, 64, 32), 1);
  EXPECT_EQ(decode_chunk(0, 5, 32), 1);
  for (int sk : {1, 7, 100, 129, 2048})
    for (int splits : {1, 2, 3, 5, 7, 64})
      for (int kps : {8, 32, 64, 512}) {
        const int chunk = decode_chunk(sk, splits, kps);
        EXPECT_GE(static_cast<long long>(chunk) * splits, sk) << "the splits cover every key";
        EXPECT_GE(chunk, 1);
      }
}

TEST(DecodePlan, DefaultSplitsUseThisProcessDevice) {
  const DeviceQuery q = query_devices();
  const int sms = q.devices.empty() ? 0 : q.devices.front().multiprocessors;
  const AttnProblem p = make_problem(2, 8, 2, 1, 5000, 64);
  EXPECT_EQ(decode_default_splits(p), decode_plan_splits(p, sms));
  EXPECT_EQ(decode_default_full_wave_splits(p), decode_splits(p, sms));
  EXPECT_EQ(decode_splits(p, 0), decode_splits(p, kDecodeNominalSMs));
}

}  // namespace
}  // namespace flashprobe::kernels
