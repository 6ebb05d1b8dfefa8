#include "flashprobe/kernels/decode_plan.h"

#include <algorithm>

namespace flashprobe::kernels {
namespace {
int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}
int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }
}  // namespace

DecodeGeometry decode_geometry(int d, int dv, int group, int sq, bool score_transform) {
  DecodeGeometry g;
  g.lanes_per_key = pow2_at_least(ceil_div(std::max(d, dv), kDecodeVecElems));
  const int rows = std::max(group, 1) * std::max(sq, 1);
  g.rows_per_block = score_transform ? 1 : std::min(pow2_at_least(rows), kDecodeMaxRowsPerBlock);
  g.row_tiles = ceil_div(rows, g.rows_per_block);
  g.keys_per_step = kDecodeThreads / g.lanes_per_key * decode_unroll(g.rows_per_block);
  return g;
}

namespace {
// As many splits as `slots` blocks hold for one batch element, rounded down; each split a whole
// number of key steps (decode_splits, decode_fused_splits).
int splits_for_slots(const AttnProblem& p, const DecodeGeometry& g, long long slots) {
  const long long blocks_per_split = static_cast<long long>(p.hkv) * g.row_tiles;
  // A few blocks past a full wave would run alone after it, each too few loads in flight to use the
  // memory system: rounded down.
  const long long want = slots / blocks_per_split;
  const int steps = std::max(ceil_div(std::max(p.sk, 0), g.keys_per_step), 1);
  // Every split gets the same whole number of steps: at most `want` splits of steps_per_split steps.
  const int steps_per_split = ceil_div(steps, static_cast<int>(std::clamp<long long>(want, 1, steps)));
  return ceil_div(steps, steps_per_split);
}
DecodeGeometry geometry_of(const AttnProblem& p) {
  return decode_geometry(p.d, p.dv, p.group(), p.sq, p.softcap > 0 || !p.alibi_slopes.empty());
}
// Resident blocks of the whole device (slots) or half of them (decode/fused=on's target).
long long slots_of(const DecodeGeometry& g, int multiprocessors, int share) {
  const int sms = multiprocessors > 0 ? multiprocessors : kDecodeNominalSMs;
  return std::max(static_cast<long long>(decode_blocks_per_sm(g.rows_per_block)) * sms / share, 1LL);
}
}  // namespace

int decode_splits(const AttnProblem& p, int multiprocessors) {
  const DecodeGeometry g = geometry_of(p);
  return splits_for_slots(p, g, slots_of(g, multiprocessors, 1));
}

bool decode_plan_half(const AttnProblem& p) { return geometry_of(p).rows_per_block == 1; }

int decode_plan_splits(const AttnProblem& p, int multiprocessors) {
  const DecodeGeometry g = geometry_of(p);
  return splits_for_slots(p, g, slots_of(g, multiprocessors, decode_plan_half(p) ? 2 : 1));
}

int decode_fused_splits(const AttnProblem& p, int multiprocessors) {
  const DecodeGeometry g = geometry_of(p);
  return splits_for_slots(p, g, slots_of(g, multiprocessors, 2));
}

int decode_walk(const AttnProblem& p, int splits, int multiprocessors) {
  const DecodeGeometry g = geometry_of(p);
  const long long tiles = static_cast<long long>(std::max(p.batch, 1)) * std::max(p.hkv, 1) * g.row_tiles;
  const long long blocks = std::clamp<long long>(slots_of(g, multiprocessors, 2) / tiles, 1, std::max(splits, 1));
  return ceil_div(std::max(splits, 1), blocks);
}

bool decode_mma_takes(int d, int dv, int group, int sq, bool score_transform) {
  return !score_transform && std::max(group, 1) * std::max(sq, 1) <= kDecodeMaxRowsPerTensorTile && std::max(d, dv) <= kDecodeMmaMaxDim;
}

int decode_mma_splits(const AttnProblem& p, int multiprocessors) {
  if (!decode_mma_takes(p.d, p.dv, p.group(), p.sq, p.softcap > 0 || !p.alibi_slopes.empty())) return decode_plan_splits(p, multiprocessors);
  const int sms = multiprocessors > 0 ? multiprocessors : kDecodeNominalSMs;
  const long long want = std::max(static_cast<long long>(kDecodeMmaBlocksPerSm) * sms / std::max(p.hkv, 1), 1LL);
  const int tiles = std::max(ceil_div(std::max(p.sk, 0), kDecodeMmaKeysPerTile), 1);
  const long long longest = std::max(tiles / kDecodeMmaMinTilesPerSplit, 1);
  const int n = static_cast<int>(std::min({want, longest, static_cast<long long>(tiles)}));
  return ceil_div(tiles, ceil_div(tiles, n));
}

int decode_chunk(int sk, int splits, int keys_per_step) {
  const int even = std::max(ceil_div(std::max(sk, 0), std::max(splits, 1)), 1);
  const int rounded = ceil_div(even, keys_per_step) * keys_per_step;
  return ceil_div(sk, rounded) == splits ? rounded : even;
}

}  // namespace flashprobe::kernels
