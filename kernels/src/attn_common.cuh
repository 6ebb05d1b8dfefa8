#pragma once
// Device-side attention semantics shared by every kernel: the mask interval of a query row, the
// score transform (scale, soft-cap, ALiBi) and the GQA head map. The rule itself (diagonal, causal
// and window narrowing, kv head) is flashprobe/core/mask.h's, the functions AttnProblem and so the
// oracle's problem logic compute through; this file applies it to a kernel's Params. Mutants change
// exactly one line here via `bug`.
#include <cmath>
#include <cstdint>

#include "flashprobe/core/device.cuh"
#include "flashprobe/core/mask.h"
#include "flashprobe/kernels/bug.h"
#include "flashprobe/kernels/params.h"
#include "src/fast_math.cuh"

namespace flashprobe::kernels::dev {

inline constexpr float kLog2e = 1.4426950408889634f;  // kernels run softmax in base 2: exp(x) = exp2(x*log2e)
inline constexpr float kLn2 = 0.6931471805599453f;     // and convert the LSE back to natural log

inline constexpr float kNegInf = -__builtin_huge_valf();

// The online softmax's reference max, the -inf guard shared by every kernel: a row that has seen no
// visible key has max -inf, and exp(-inf - -inf) is NaN; with 0 in its place every weight
// exp(s - 0) of a masked score is 0, and the row's state stays (m, l, O) = (-inf, 0, 0). Kernels
// subtract this from scores and from the previous max (the rescale factor exp2(m_old - ref)).
FP_DEV float softmax_ref(float m) { return m == kNegInf ? 0.f : m; }

FP_DEV int keys_of(const Params& p, int b) { return p.seqlens ? p.seqlens[b] : p.sk; }

FP_DEV std::int64_t offset4(const DevStrides& s, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t x) {
  return b * s.b + t * s.s + h * s.h + x * s.d;
}

// The diagonal of batch b: key j lies on the diagonal of query i when j = i + diag. Top-left
// alignment returns before keys_of: the eager seqlens load cost the mma kernel a register at d = 64
// (238 -> 239 with the soft-cap/ALiBi path, SASS compared with tools/sass_diff.py).
template <Bug bug>
FP_DEV std::int64_t diag_of(const Params& p, int b) {
  if (p.causal == CausalMode::top_left) return mask::diag_offset(true, 0, p.sq);
  if constexpr (bug == Bug::causal_top_left) {
    if (p.causal == CausalMode::bottom_right) return mask::diag_offset(true, 0, p.sq);
  }
  if constexpr (bug == Bug::kv_offset_ignored) return mask::diag_offset(false, std::int64_t{keys_of(p, b)} - p.kv_offset, p.sq);
  if constexpr (bug == Bug::varlen_diag_global) return mask::diag_offset(false, p.sk, p.sq);
  return mask::diag_offset(false, keys_of(p, b), p.sq);
}

// Visible keys of row i of batch b: the interval [lo, hi] (empty when lo > hi). With
// cap_at_keys = false the upper end ignores the key count (only the tail_unmasked mutant does that).
template <Bug bug>
FP_DEV void visible_range(const Params& p, int b, int i, std::int64_t& lo, std::int64_t& hi, bool cap_at_keys = true) {
  const std::int64_t diag = i + diag_of<bug>(p, b);
  lo = 0;
  hi = cap_at_keys ? std::int64_t{keys_of(p, b)} - 1 : INT64_MAX;
  mask::narrow(diag, p.causal != CausalMode::none, p.window_left, p.window_right, lo, hi);
}

// visible_range in 32 bits. Every value fits an int: lo lies in [0, max(sq, keys)) and hi in
// [min(0, keys - sq), keys) (diag is keys - sq or 0, the window only narrows). A kernel that keeps
// its indices in 32 bits refuses sq + sk above kMaxLen32 (the mma launcher does), so
// its other indices fit as well: keys up to keys - 1 + a key tile, rows up to sq - 1 + rows per
// block, and the per-tile differences lo - kv0, hi - kv0 and i + diag - kv0 (kv0 in [0, keys)),
// which all lie in (-(sq + keys), sq + keys + rows per block).
FP_DEV void visible_range32(const Params& p, int b, int i, int& lo, int& hi) {
  std::int64_t l, h;
  visible_range<Bug::none>(p, b, i, l, h);
  lo = static_cast<int>(l);
  hi = static_cast<int>(h);
}

// visible_range as affine bounds in the row, for kernels that recompute a row's interval instead of
// keeping it: lo(i) = max(0, i + lo_off), hi(i) = min(keys(b) - 1, i + hi_off) for 0 <= i < sq
// + rows per block (the offsets are clamped so that neither sum overflows; without a left window
// lo_off = -(sq + kOffsetsFar32), without a causal mask or right window hi_off = keys(b)). Same 32-bit
// premise as visible_range32, sq + sk <= kMaxLen32, which leaves -(sq + kOffsetsFar32) inside int.
static_assert(std::int64_t{kMaxLen32} + kOffsetsFar32 <= 2147483647, "visible_offsets32's open end must fit an int");
FP_DEV void visible_offsets32(const Params& p, int b, int& lo_off, int& hi_off) {
  const std::int64_t diag = diag_of<Bug::none>(p, b), keys = keys_of(p, b), far = std::int64_t{p.sq} + kOffsetsFar32;
  std::int64_t lo = -far, hi = keys;
  mask::narrow(diag, p.causal != CausalMode::none, p.window_left, p.window_right, lo, hi);
  lo_off = static_cast<int>(lo);
  hi_off = static_cast<int>(hi < -far ? -far : hi);
}

// Row i's visible keys [lo, hi] from the offsets of visible_offsets32 (lo > hi: none).
FP_DEV void visible_from_offsets32(int i, int keys, int lo_off, int hi_off, int& lo, int& hi) {
  lo = i + lo_off > 0 ? i + lo_off : 0;
  hi = i + hi_off < keys - 1 ? i + hi_off : keys - 1;
}

// The keys the query rows i0 .. i0 + rows - 1 (cut at sq) see together, [lo(first row), hi(last row)]
// from the offsets of visible_offsets32 (lo > hi: none), for kernels that walk a row block's key tiles.
FP_DEV void block_keys_from_offsets32(int i0, int rows, int sq, int keys, int lo_off, int hi_off, int& lo, int& hi) {
  const int last = (i0 + rows < sq ? i0 + rows : sq) - 1;
  lo = 1;
  hi = 0;
  if (i0 <= last) {
    int t;
    visible_from_offsets32(i0, keys, lo_off, hi_off, lo, t);
    visible_from_offsets32(last, keys, lo_off, hi_off, t, hi);
  }
}

template <Bug bug>
FP_DEV int kv_head(const Params& p, int h) {
  if constexpr (bug == Bug::gqa_mod) return h % p.hkv;
  return mask::kv_head(h, p.group);
}

// The score of query i (at diagonal position i + diag) against key j, from the raw dot product:
// scale, then soft-cap cap*tanh(s/cap), then ALiBi s -= slope[h] * |i + diag - j|.
FP_DEV float score(const Params& p, float dot, int h, std::int64_t i_diag, std::int64_t j) {
  float s = dot * p.scale;
  if (p.softcap > 0.f) s = p.softcap * tanhf(s / p.softcap);
  if (p.alibi) {
    const std::int64_t dist = i_diag >= j ? i_diag - j : j - i_diag;
    s -= p.alibi[h] * static_cast<float>(dist);
  }
  return s;
}

}  // namespace flashprobe::kernels::dev
