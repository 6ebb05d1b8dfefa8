#pragma once
// The case generator: what a kernel supports (Domain), one generated case (Case: a problem, an input
// seed and an input kind) and the draws that make one, biased toward the shapes that broke real
// kernels. The bias, per field (see draw_problem in cases.cpp for the weights):
//   Sk: 0, 1, 2, 3, 5, 7 (softmax reductions over non-power-of-two blocks — the Sk = 3 bug),
//       tile-1, tile, tile+1, 2*tile-1, 2*tile+1 (tail tiles) of every key-tile width, else uniform
//       up to the size budget
//   Sq: 1 (decode), the gap 2..tile-1 (partial query tiles), Sq > Sk and Sq < Sk under causal masks
//   D:  the domain's dims, plus odd ones (40, 59, 111) where the kernel claims any D
//   GQA ratios 1, 2, 3, 5, 6, 8 and MQA; kv_offset > 0; per-batch key lengths with zeros;
//   fused-QKV strides and BHSD; independent layouts per tensor (K in BSHD and V in BHSD, padded
//   rows, caches with room past the keys); windows that leave rows empty; scores near the fp16
//   range (large-magnitude inputs) and past it (large logits); nearly identical keys.
//   Long rows: 1 in long_row_odds problems has Sk in the thousands with few query rows (an O or row
//   sum accumulated in fp16 shows only over thousands of keys; check them on sampled rows).
//   Key splits (split-K kernels): the kernel's default, 1, 2, odd counts, more splits than keys.
//
// Every random decision goes through a Choices object, so one definition of the distribution serves
// every driver: RapidCheck in the C++ gate (generators.h), Hypothesis in the Python package, and a
// plain seeded generator (generate_case). Each choice is an integer range that shrinks toward its low
// end, and the draws put the simplest option there (feature off, Sq = 1, the smallest edge length),
// so a failing case shrinks to one that has only what the failure needs.
//
// Example: the 7th case of a seeded run over a kernel's domain, and its inputs.
//   Domain d; d.head_dims = {64, 128}; d.tile_m = 64; d.tile_n = 64;
//   const Case c = generate_case(d, 7);
//   const AttnInputs in = c.make_inputs();
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::proptests {

struct Domain {
  std::vector<int> head_dims{64, 128};  // D = Dv values allowed
  bool any_head_dim = false;            // kernel claims any D (then odd dims are drawn too)
  bool dv_differs = false;              // Dv != D allowed
  std::vector<DType> dtypes{DType::f16, DType::bf16};
  int tile_m = 64;   // query tile height (for the Sq gap) and key tile width (for Sk tails)
  int tile_n = 64;
  // Further key-tile widths of the same kernel (its tile classes differ: wgmma's 160/160 and 256/256
  // take 64 keys, its others 128): Sk is drawn at their edges too, and edge windows on them.
  std::vector<int> more_tile_n;
  int max_sq = 300;  // upper bounds at full size (Choices::size() == 100); edge_windows may raise Sq
                     // past max_sq to reach the second row tile
  int max_sk = 600;
  int max_batch = 3;
  int max_hq = 8;
  bool causal = true, top_left = true, windows = true, softcap = true, alibi = true;
  int window_odds = 5;  // a sliding window in 1 of window_odds problems (1: every problem)
  bool edge_windows = false;  // half the windows put their bounds on key-tile edges (cases.cpp)
  bool seqlens = true, strides = true, kv_offset = true;
  // With strides: 1 in 4 problems gives every tensor its own layout, row padding and capacity
  // (draw_problem), with two KV heads at least where max_hq has room (with one, BSHD and BHSD
  // address alike); for kernels that take any strides (the Python package's arrays do not).
  bool tensor_layouts = false;
  // Those layouts' strides (all but the dims', 1) are multiples of stride_align elements: a kernel
  // fed by 16-byte loads (wgmma's TMA: 8) states it, so that its padded rows are drawn as often as
  // any kernel's instead of being refused by its supports() and re-drawn. >= 1.
  int stride_align = 1;
  bool sk_zero = true;
  // 1 in long_row_odds problems (at every size; 0: never) is a long row: batch 1, at most 2 query
  // heads and long_row_max_sq query rows, Sk in [long_sk_min, long_sk_max]. The kernel gate's
  // domains (gate/include/flashprobe/gate/kernel_domain.h) turn it on.
  int long_row_odds = 0;
  int long_sk_min = 1024, long_sk_max = 4096, long_row_max_sq = 16;
  // The kernel splits the keys of a row over blocks (decode): each case also draws a split count
  // (Case::splits) that the property forces through KernelInfo::with_splits.
  bool key_splits = false;
  // Last word: the kernel's own predicate (e.g. its select()/supports()); problems it refuses are
  // re-drawn (a domain that rarely satisfies it makes the driver give up, which fails loudly).
  std::function<bool(const AttnProblem&)> supports;
};

// large_magnitude: scores of order 1e2-1e3 before the softmax; rising_keys: the same with keys that
// grow along the sequence (InputDist::key_ramp), so that every key tile raises a row's max by far
// more than 2^8 (a kernel that keeps a stale max, mma's conditional rescale, must rescale there);
// large_logits: scores of order 1e5, past the fp16 range (65504) in most rows for every dtype, so a
// kernel that rounds scores to fp16 before its max or exp overflows there (kLargeLogitsMagnitude).
enum class InputKind { normal, large_magnitude, near_identical_keys, rising_keys, large_logits };
// Input scale of large_logits: q, k ~ N(0, m^2), so scale * q.k has standard deviation m^2 = 65536
// with the default scale.
inline constexpr double kLargeLogitsMagnitude = 256.0;
std::string_view input_kind_name(InputKind k);
std::optional<InputKind> parse_input_kind(std::string_view name);
std::vector<InputKind> all_input_kinds();

struct Case {
  AttnProblem problem;
  std::uint64_t seed = 0;
  InputKind inputs = InputKind::normal;
  int splits = 0;  // key splits forced on a split-K kernel (Domain::key_splits); 0: the kernel's own
  std::string id() const;
  // The case's Q, K and V from the counter-based generator (core/counter_inputs.h): every element a
  // function of (seed, tensor, index), so the device fill (kernels/input_fill.h) writes the same bits.
  AttnInputs make_inputs() const;
  // The input kind's distribution (magnitude, key jitter or ramp) for the generator.
  InputDist input_dist() const;
  bool operator==(const Case&) const = default;
};
// {"problem": {...}, "seed": N, "inputs": "rising"[, "splits": 3]}: what a failure prints and a replay reads.
void to_json(nlohmann::json& j, const Case& c);
void from_json(const nlohmann::json& j, Case& c);

// The source of every random decision of a draw.
class Choices {
 public:
  virtual ~Choices() = default;
  // An integer in [lo, hi) (hi > lo) whose spread grows with size(), as RapidCheck's inRange: at
  // size s it falls in the first s/100 of the range. Shrinking moves it toward lo.
  virtual int in_range(int lo, int hi) = 0;
  // One of n options (n > 0), whatever the size: the option of a weighted choice or a list.
  // Shrinking moves it toward option 0.
  virtual int pick(int n) = 0;
  // A 64-bit input seed; shrinking moves it toward 0.
  virtual std::uint64_t any_u64() = 0;
  // The size budget in percent of the domain's maxima (100: full size, RapidCheck's nominal size).
  virtual int size() = 0;
};

// One problem drawn from d. It may be invalid or refused by d.supports: keep it only if accepts().
AttnProblem draw_problem(const Domain& d, Choices& c);
// Valid (no error of validate()) and, when d has a predicate, supported.
bool accepts(const Domain& d, const AttnProblem& p);
// The input seed and kind of a case (its problem drawn before).
void draw_inputs(Case& c, Choices& ch);
// The case's key split count when d.key_splits (else leaves 0): the kernel's default, 1, 2, an odd
// count (3..9), or more splits than keys (sk + 1 .. sk + 4, so every key has its own split and the
// last ones hold none).
void draw_splits(const Domain& d, Case& c, Choices& ch);
// A long-row case (Domain::long_row_odds): the oracle checks it on sampled rows.
bool is_long_row(const AttnProblem& p, const Domain& d);

// Choices from a seeded 64-bit generator, uniform like RapidCheck's at this size (each in_range
// scaled to size/100 of its width, as RapidCheck scales inRange; pick never scaled).
class SeededChoices final : public Choices {
 public:
  explicit SeededChoices(std::uint64_t seed, int size = 100);
  int in_range(int lo, int hi) override;
  int pick(int n) override;
  std::uint64_t any_u64() override;
  int size() override { return size_; }

 private:
  std::uint64_t next();
  std::uint64_t state_;
  int size_;
};
// A case of d from a seed alone (problems that d does not accept are re-drawn from the same stream;
// throws UsageError naming the domain's refusal when 1000 draws in a row are refused).
Case generate_case(const Domain& d, std::uint64_t seed, int size = 100);

}  // namespace flashprobe::proptests
