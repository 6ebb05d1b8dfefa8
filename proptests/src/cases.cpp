#include "flashprobe/proptests/cases.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <utility>

#include "flashprobe/core/counter_inputs.h"
#include "flashprobe/core/error.h"

namespace flashprobe::proptests {

namespace {

// One of the values, whatever the size (an element of a list): the first shrinks best.
template <class T>
T pick(Choices& c, const std::vector<T>& values) {
  return values[static_cast<std::size_t>(c.pick(static_cast<int>(values.size())))];
}
template <class T>
T pick(Choices& c, std::initializer_list<T> values) {
  return pick(c, std::vector<T>(values));
}

// The index of a weighted option (weights > 0), whatever the size; shrinks toward option 0.
int weighted(Choices& c, std::initializer_list<int> weights) {
  int total = 0;
  for (int w : weights) total += w;
  int x = c.pick(total), i = 0;
  for (int w : weights) {
    if (x < w) return i;
    x -= w;
    ++i;
  }
  return i - 1;
}

// A feature drawn with probability 1/n at full size, off in the value a shrink moves toward. The
// range scales with the size, so small sizes draw no rare feature (about size >= 100 - 50 / (n - 1)).
bool rarely(Choices& c, int n) { return c.in_range(0, n) == n - 1; }

// Sequence lengths: edge values weighted heavily, otherwise uniform within the (size-scaled) bound.
// The edge is drawn by a scaled index, so Sk = 63 can shrink to 7, 5, 3 while a property still fails.
// `more_tiles`: further tile widths whose edges join the first's (each value once).
int draw_len(Choices& c, int tile, int max, bool allow_zero, const std::vector<int>& more_tiles = {}) {
  // (A size past 100 reaches past max, as FLASHPROBE_PROP_MAX_SIZE=400 asks; below max = 8 the
  // floor of 8 keys is max.)
  const int bound = std::max({1, std::min(8, max), max * std::max(c.size(), 1) / 100});
  std::vector<int> edges{1, 2, 3, 5, 7, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1};
  for (int t : more_tiles)
    for (int v : {t - 1, t, t + 1, 2 * t - 1, 2 * t + 1})
      if (std::find(edges.begin(), edges.end(), v) == edges.end()) edges.push_back(v);
  // (ascending, as one width's are: a scaled index reaches the short edges first and shrinks toward them)
  if (!more_tiles.empty()) std::sort(edges.begin(), edges.end());
  if (allow_zero) edges.push_back(0);
  edges.erase(std::remove_if(edges.begin(), edges.end(), [&](int v) { return v < 0 || v > max; }), edges.end());
  if (weighted(c, {3, 2}) == 0 && !edges.empty())
    return edges[static_cast<std::size_t>(c.in_range(0, static_cast<int>(edges.size())))];
  return c.in_range(1, bound + 1);
}

int draw_sq(const Domain& d, Choices& c) {
  switch (weighted(c, {2, 2, 3})) {
    case 0: return 1;
    case 1:  // the gap below one query tile (within max_sq)
      return d.max_sq < 2 ? 1 : c.in_range(2, std::max(3, std::min(d.tile_m, d.max_sq + 1)));
    default: return draw_len(c, d.tile_m, d.max_sq, false);
  }
}

std::pair<int, int> draw_heads(const Domain& d, Choices& c) {
  const int ratio = pick(c, {1, 1, 2, 3, 5, 6, 8});
  const int hkv = c.in_range(1, std::max(2, d.max_hq / ratio + 1));
  return {hkv * ratio, hkv};
}

// ALiBi slopes 2^-1 .. 2^-8 over each 8 heads.
std::vector<double> alibi_slopes(int hq) {
  std::vector<double> v(static_cast<std::size_t>(hq));
  for (int h = 0; h < hq; ++h) v[static_cast<std::size_t>(h)] = std::ldexp(1.0, -(h % 8) - 1);
  return v;
}

int pick_dim(const Domain& d, int idx) { return d.head_dims[static_cast<std::size_t>(idx) % d.head_dims.size()]; }

// One tensor's strides, drawn apart from the other tensors': BSHD or BHSD, rows padded by a few
// elements (8 and 24 keep 16-byte rows; 3 does not), and room for more positions than the problem
// has (a cache of capacity seq + extra). A row is rounded up to `align` elements (Domain::stride_align),
// so an aligned kernel gets its padded rows (3 becomes 8 with align 8); every other stride is a
// multiple of the row.
Strides draw_tensor_strides(Choices& c, int seq, int heads, int dim, int align) {
  const bool bhsd = c.pick(2) == 1;
  const int pad = pick(c, {0, 8, 24, 3});
  const int extra = pick(c, {0, 16, 37});
  const std::int64_t row = (std::int64_t{dim} + pad + align - 1) / align * align;
  Strides st;
  st.d = 1;
  if (bhsd) {
    st.s = row;
    st.h = std::int64_t{seq + extra} * st.s;
    st.b = heads * st.h;
  } else {
    st.h = row;
    st.s = heads * st.h;
    st.b = std::int64_t{seq + extra} * st.s;
  }
  return st;
}

}  // namespace

AttnProblem draw_problem(const Domain& d, Choices& c) {
  if (d.head_dims.empty()) throw UsageError("the domain lists no head dim (head_dims is empty)");
  if (d.dtypes.empty()) throw UsageError("the domain lists no dtype (dtypes is empty)");
  if (d.stride_align < 1)
    throw UsageError("the domain's stride_align=" + std::to_string(d.stride_align) +
                     " is not allowed: it must be >= 1 (elements)");
  AttnProblem p;
  // Long rows at every size (a pick, not scaled): the last option, so that a shrink tries short first.
  const bool long_row = d.long_row_odds > 0 && d.long_sk_max >= d.long_sk_min &&
                        c.pick(d.long_row_odds) == d.long_row_odds - 1;
  p.batch = c.in_range(1, d.max_batch + 1);
  const auto [hq, hkv] = draw_heads(d, c);
  p.hq = hq;
  p.hkv = hkv;
  p.sq = draw_sq(d, c);
  p.sk = draw_len(c, d.tile_n, d.max_sk, d.sk_zero, d.more_tile_n);
  if (long_row) {
    p.batch = 1;
    p.hkv = 1;
    p.hq = pick(c, {1, 2});
    p.sq = std::min(p.sq, std::max(1, std::min(d.long_row_max_sq, d.max_sq)));
    p.sk = d.long_sk_min + c.pick(d.long_sk_max - d.long_sk_min + 1);
  }
  if (d.any_head_dim && rarely(c, 4)) p.d = pick(c, {40, 59, 80, 96, 111, 8, 24});
  else p.d = pick_dim(d, c.in_range(0, static_cast<int>(d.head_dims.size())));
  p.dv = p.d;
  if (d.dv_differs && rarely(c, 5)) p.dv = d.any_head_dim ? c.in_range(1, 160) : pick_dim(d, c.in_range(0, 8));
  p.dtype = pick(c, d.dtypes);
  p.out_dtype = p.dtype;
  if (d.causal) {
    const int k = c.in_range(0, d.top_left ? 5 : 4);
    p.causal = k < 2 ? Causal::none : k < 4 ? Causal::bottom_right : Causal::top_left;
  }
  if (d.kv_offset && p.sk > p.sq && rarely(c, 3)) p.kv_offset = p.sk - p.sq;  // a KV cache: sk = kv_offset + sq
  if (d.windows && rarely(c, d.window_odds)) {
    p.window_left = pick(c, {-1, 0, 1, 3, 16, 70});
    p.window_right = p.causal != Causal::none ? pick(c, {-1, 0}) : pick(c, {-1, 0, 2, 33});
    if (d.edge_windows && rarely(c, 2)) {
      // Bounds on key-tile edges at the rows where tiles of rows start and end: row t * m sees key
      // t * m' - 1 as its first (the last key of a tile), row t * m - 1 sees key t * m' as its last
      // (the first key of a tile). Off-by-ones in a kernel's tile skipping live exactly there.
      // (one of the key-tile widths; no draw where there is one, so a one-width domain draws as before)
      const int which = d.more_tile_n.empty() ? 0 : c.pick(1 + static_cast<int>(d.more_tile_n.size()));
      const int t = which == 0 ? d.tile_n : d.more_tile_n[static_cast<std::size_t>(which - 1)];
      p.sq = std::max(p.sq, t + 1 + c.in_range(0, 2 * t));  // rows past the first row tile
      const std::int64_t diag = p.diag_offset(0);
      const auto mod = [t](std::int64_t v) { return static_cast<int>(((v % t) + t) % t); };
      p.window_left = mod(diag + 1) + t * c.in_range(0, 2);
      if (p.causal == Causal::none) p.window_right = mod(1 - diag) + t * c.in_range(0, 2);
    }
  }
  if (d.softcap && rarely(c, 6)) p.softcap = pick(c, {5.0, 30.0, 50.0});
  if (d.alibi && rarely(c, 6)) p.alibi_slopes = alibi_slopes(p.hq);
  if (d.seqlens && p.sk > 0 && p.kv_offset == 0 && rarely(c, 4)) {
    p.seqlens_k.resize(static_cast<std::size_t>(p.batch));
    for (auto& l : p.seqlens_k) {
      const int k = weighted(c, {1, 1, 2});
      l = k == 0 ? 0 : k == 1 ? p.sk : c.in_range(0, p.sk + 1);
    }
  }
  if (d.strides && d.tensor_layouts && c.pick(4) == 3) {
    // Every tensor its own layout, padding and capacity (K in BSHD and V in BHSD, say): a kernel
    // that reads one tensor with another's strides is wrong here and nowhere else. With one KV head
    // BSHD and BHSD address K and V alike (the head stride is never used): a second one (and its
    // query heads) where max_hq has room, long rows aside (they keep one).
    if (p.hkv == 1 && !long_row && 2 * p.hq <= d.max_hq) {
      p.hkv = 2;
      p.hq *= 2;
      if (!p.alibi_slopes.empty()) p.alibi_slopes = alibi_slopes(p.hq);
    }
    p.q = draw_tensor_strides(c, p.sq, p.hq, p.d, d.stride_align);
    p.k = draw_tensor_strides(c, p.sk, p.hkv, p.d, d.stride_align);
    p.v = draw_tensor_strides(c, p.sk, p.hkv, p.dv, d.stride_align);
    p.o = draw_tensor_strides(c, p.sq, p.hq, p.dv, d.stride_align);
  } else if (d.strides) {
    switch (c.in_range(0, 4)) {  // 0, 1: contiguous BSHD (what a failing case shrinks to)
      case 2: p.with_layout(TensorLayout::bhsd); break;
      case 3:
        if (p.hq == p.hkv && p.d == p.dv && p.sq == p.sk) {
          // A fused QKV buffer [B, S, 3, H, D] viewed as three tensors.
          const std::int64_t row = 3LL * p.hq * p.d;
          p.q = {p.sq * row, row, p.d, 1};
          p.k = p.q;
          p.v = p.q;
        }
        break;
      default: break;
    }
  }
  if (rarely(c, 8)) p.scale = pick(c, {0.5, 0.0625, 1.0});
  return p;
}

bool accepts(const Domain& d, const AttnProblem& p) { return !has_errors(validate(p)) && (!d.supports || d.supports(p)); }

void draw_inputs(Case& c, Choices& ch) {
  c.seed = ch.any_u64();
  c.inputs = all_input_kinds()[static_cast<std::size_t>(weighted(ch, {6, 1, 1, 1, 1}))];
}

void draw_splits(const Domain& d, Case& c, Choices& ch) {
  c.splits = 0;
  if (!d.key_splits) return;
  switch (weighted(ch, {2, 1, 1, 2, 1})) {
    case 0: c.splits = 0; break;  // the kernel's own count
    case 1: c.splits = 1; break;
    case 2: c.splits = 2; break;
    case 3: c.splits = pick(ch, {3, 5, 7, 9}); break;
    default: c.splits = c.problem.sk + 1 + ch.pick(4); break;  // more splits than keys: empty ones last
  }
}

bool is_long_row(const AttnProblem& p, const Domain& d) { return d.long_row_odds > 0 && p.sk >= d.long_sk_min; }

std::vector<InputKind> all_input_kinds() {
  return {InputKind::normal, InputKind::large_magnitude, InputKind::near_identical_keys, InputKind::rising_keys,
          InputKind::large_logits};
}

std::string_view input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::normal: return "normal";
    case InputKind::large_magnitude: return "large";
    case InputKind::near_identical_keys: return "nearkeys";
    case InputKind::rising_keys: return "rising";
    case InputKind::large_logits: return "logits";
  }
  return "?";
}

std::optional<InputKind> parse_input_kind(std::string_view name) {
  for (InputKind k : all_input_kinds())
    if (input_kind_name(k) == name) return k;
  return std::nullopt;
}

std::string Case::id() const {
  return problem.id() + "_in-" + std::string(input_kind_name(inputs)) + "_seed" + std::to_string(seed) +
         (splits > 0 ? "_splits" + std::to_string(splits) : "");
}

InputDist Case::input_dist() const {
  InputDist dist;
  if (inputs == InputKind::large_magnitude || inputs == InputKind::rising_keys) {
    // Scores near the fp16 range: |q.k| * scale of order 1e3..1e4 before the softmax.
    dist.magnitude = problem.dtype == DType::f16 ? 8.0 : 16.0;
    // Rising: key j scaled by 1 + j / 32, so a 64-key tile's max exceeds the last one's by hundreds
    // (in base-2 exponent units) and a stale max would overflow exp2 even in fp32.
    if (inputs == InputKind::rising_keys) dist.key_ramp = 1.0 / 32;
  } else if (inputs == InputKind::large_logits) {
    dist.magnitude = kLargeLogitsMagnitude;
  } else if (inputs == InputKind::near_identical_keys) {
    dist.key_jitter = 1.0 / 64;
  }
  return dist;
}

AttnInputs Case::make_inputs() const { return counter_inputs(problem, seed, input_dist()); }

void to_json(nlohmann::json& j, const Case& c) {
  j = nlohmann::json{{"problem", c.problem}, {"seed", c.seed}, {"inputs", std::string(input_kind_name(c.inputs))}};
  if (c.splits > 0) j["splits"] = c.splits;
}

void from_json(const nlohmann::json& j, Case& c) {
  if (!j.is_object()) throw UsageError("a case must be a JSON object {\"problem\", \"seed\", \"inputs\"}, got: " + j.dump());
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "problem" && it.key() != "seed" && it.key() != "inputs" && it.key() != "splits")
      throw UsageError("unknown case field '" + it.key() + "' (known: problem, seed, inputs, splits)");
  if (!j.contains("problem")) throw UsageError("a case needs a \"problem\"");
  Case out;
  from_json(j.at("problem"), out.problem);
  if (j.contains("seed")) {
    const auto& s = j.at("seed");
    if (!s.is_number_integer() || (!s.is_number_unsigned() && s.get<std::int64_t>() < 0))
      throw UsageError("case field 'seed' must be an integer in [0, 2^64), got: " + s.dump());
    out.seed = s.get<std::uint64_t>();
  }
  if (j.contains("inputs")) {
    const auto& s = j.at("inputs");
    std::string allowed;
    for (InputKind k : all_input_kinds()) allowed += (allowed.empty() ? "" : ", ") + std::string(input_kind_name(k));
    const auto k = s.is_string() ? parse_input_kind(s.get<std::string>()) : std::nullopt;
    if (!k) throw UsageError("case field 'inputs' = " + s.dump() + " is not one of " + allowed);
    out.inputs = *k;
  }
  if (j.contains("splits")) {
    const auto& s = j.at("splits");
    if (!s.is_number_integer() || s.get<std::int64_t>() < 0 || s.get<std::int64_t>() > 1000000)
      throw UsageError("case field 'splits' must be an integer in [0, 1000000] (0: the kernel's own count), got: " + s.dump());
    out.splits = s.get<int>();
  }
  c = std::move(out);
}

SeededChoices::SeededChoices(std::uint64_t seed, int size) : state_(seed), size_(size) {
  if (size < 0) throw UsageError("size=" + std::to_string(size) + " is not allowed: it must be >= 0");
}

std::uint64_t SeededChoices::next() {  // splitmix64: the same stream on every platform
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int SeededChoices::pick(int n) {
  if (n <= 0) throw UsageError("pick(" + std::to_string(n) + ") has no option");
  return static_cast<int>(next() % static_cast<std::uint64_t>(n));
}

int SeededChoices::in_range(int lo, int hi) {
  if (hi <= lo) throw UsageError("in_range(" + std::to_string(lo) + ", " + std::to_string(hi) + ") is empty");
  const std::uint64_t width = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo - 1);
  const std::uint64_t scaled = (width * static_cast<std::uint64_t>(std::min(size_, 100)) + 50) / 100;
  return lo + static_cast<int>(next() % (scaled + 1));
}

std::uint64_t SeededChoices::any_u64() { return next(); }

Case generate_case(const Domain& d, std::uint64_t seed, int size) {
  SeededChoices c(seed, size);
  Case out;
  for (int tries = 0;; ++tries) {
    if (tries == 1000)
      throw UsageError("the domain refused 1000 generated problems in a row (seed " + std::to_string(seed) +
                       "): widen it or loosen its supports predicate");
    out.problem = draw_problem(d, c);
    if (accepts(d, out.problem)) break;
  }
  draw_inputs(out, c);
  draw_splits(d, out, c);
  return out;
}

}  // namespace flashprobe::proptests
