#include "flashprobe/proptests/generators.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"

namespace flashprobe::proptests {

namespace {
using rc::gen::element;
using rc::gen::inRange;
using rc::gen::weightedOneOf;

// Sequence lengths: edge values weighted heavily, otherwise uniform within the (size-scaled) bound.
rc::Gen<int> gen_len(int tile, int max, bool allow_zero) {
  return rc::gen::withSize([=](int size) {
    const int bound = std::max(8, max * std::max(size, 1) / 100);
    std::vector<int> edges{1, 2, 3, 5, 7, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1};
    if (allow_zero) edges.push_back(0);
    edges.erase(std::remove_if(edges.begin(), edges.end(), [&](int v) { return v < 0 || v > max; }), edges.end());
    // The edge is drawn by index (RapidCheck's elementOf never shrinks; an index shrinks toward the
    // small edges first, so Sk = 63 can shrink to 7, 5, 3 while a property still fails).
    const auto edge = rc::gen::map(inRange<int>(0, static_cast<int>(edges.size())),
                                   [edges](int i) { return edges[static_cast<std::size_t>(i)]; });
    return weightedOneOf<int>({{3, edge}, {2, inRange(1, bound + 1)}});
  });
}

rc::Gen<int> gen_sq(const Domain& d) {
  return weightedOneOf<int>({{2, rc::gen::just(1)},
                             {2, inRange(2, std::max(3, d.tile_m))},  // the gap below one query tile
                             {3, gen_len(d.tile_m, d.max_sq, false)}});
}

rc::Gen<std::pair<int, int>> gen_heads(const Domain& d) {
  return rc::gen::mapcat(rc::gen::elementOf(std::vector<int>{1, 1, 2, 3, 5, 6, 8}), [=](int ratio) {
    return rc::gen::map(inRange(1, std::max(2, d.max_hq / ratio + 1)), [=](int hkv) {
      return std::make_pair(hkv * ratio, hkv);
    });
  });
}

int pick_dim(const Domain& d, int idx_or_odd) { return d.head_dims[static_cast<std::size_t>(idx_or_odd) % d.head_dims.size()]; }

// A feature drawn with probability 1/n that is off in the value RapidCheck shrinks toward (integers
// shrink toward the low end of their range): a counterexample sheds every feature it does not need.
bool rarely(int n) { return *inRange(0, n) == n - 1; }

AttnProblem build(const Domain& d) {
  AttnProblem p;
  p.batch = *inRange(1, d.max_batch + 1);
  const auto [hq, hkv] = *gen_heads(d);
  p.hq = hq;
  p.hkv = hkv;
  p.sq = *gen_sq(d);
  p.sk = *gen_len(d.tile_n, d.max_sk, d.sk_zero);
  if (d.any_head_dim && rarely(4)) p.d = *element(40, 59, 80, 96, 111, 8, 24);
  else p.d = pick_dim(d, *inRange(0, static_cast<int>(d.head_dims.size())));
  p.dv = p.d;
  if (d.dv_differs && rarely(5)) p.dv = d.any_head_dim ? *inRange(1, 160) : pick_dim(d, *inRange(0, 8));
  p.dtype = *rc::gen::elementOf(d.dtypes);
  p.out_dtype = p.dtype;
  if (d.causal) {
    const int c = *inRange(0, d.top_left ? 5 : 4);
    p.causal = c < 2 ? Causal::none : c < 4 ? Causal::bottom_right : Causal::top_left;
  }
  if (d.kv_offset && p.sk > 0 && rarely(3)) p.kv_offset = *inRange(0, p.sk + 1);
  if (d.windows && rarely(d.window_odds)) {
    p.window_left = *element(-1, 0, 1, 3, 16, 70);
    p.window_right = p.causal != Causal::none ? *element(-1, 0) : *element(-1, 0, 2, 33);
    if (d.edge_windows && rarely(2)) {
      // Bounds on key-tile edges at the rows where tiles of rows start and end: row t * m sees key
      // t * m' - 1 as its first (the last key of a tile), row t * m - 1 sees key t * m' as its last
      // (the first key of a tile). Off-by-ones in a kernel's tile skipping live exactly there.
      const int t = d.tile_n;
      p.sq = std::max(p.sq, t + 1 + *inRange(0, 2 * t));  // rows past the first row tile
      const std::int64_t diag = p.diag_offset(0);
      const auto mod = [t](std::int64_t v) { return static_cast<int>(((v % t) + t) % t); };
      p.window_left = mod(diag + 1) + t * *inRange(0, 2);
      if (p.causal == Causal::none) p.window_right = mod(1 - diag) + t * *inRange(0, 2);
    }
  }
  if (d.softcap && rarely(6)) p.softcap = *element(5.0, 30.0, 50.0);
  if (d.alibi && rarely(6)) {
    p.alibi_slopes.resize(static_cast<std::size_t>(p.hq));
    for (int h = 0; h < p.hq; ++h) p.alibi_slopes[static_cast<std::size_t>(h)] = std::ldexp(1.0, -(h % 8) - 1);
  }
  if (d.seqlens && p.sk > 0 && rarely(4)) {
    p.seqlens_k.resize(static_cast<std::size_t>(p.batch));
    for (auto& l : p.seqlens_k) l = *weightedOneOf<int>({{1, rc::gen::just(0)}, {1, rc::gen::just(p.sk)}, {2, inRange(0, p.sk + 1)}});
  }
  if (d.strides) {
    switch (*inRange(0, 4)) {  // 0, 1: contiguous BSHD (what a failing case shrinks to)
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
  if (rarely(8)) p.scale = *element(0.5, 0.0625, 1.0);
  return p;
}
}  // namespace

rc::Gen<AttnProblem> gen_problem(const Domain& d) {
  return rc::gen::suchThat(rc::gen::exec([d] { return build(d); }), [d](const AttnProblem& p) {
    return !has_errors(validate(p)) && (!d.supports || d.supports(p));
  });
}

rc::Gen<Case> gen_case(const Domain& d) {
  return rc::gen::exec([d] {
    Case c;
    c.problem = *gen_problem(d);
    c.seed = *rc::gen::arbitrary<std::uint64_t>();
    c.inputs = *weightedOneOf<InputKind>({{6, rc::gen::just(InputKind::normal)},
                                          {1, rc::gen::just(InputKind::large_magnitude)},
                                          {1, rc::gen::just(InputKind::near_identical_keys)},
                                          {1, rc::gen::just(InputKind::rising_keys)}});
    return c;
  });
}

std::string_view input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::normal: return "normal";
    case InputKind::large_magnitude: return "large";
    case InputKind::near_identical_keys: return "nearkeys";
    case InputKind::rising_keys: return "rising";
  }
  return "?";
}

std::string Case::id() const {
  return problem.id() + "_in-" + std::string(input_kind_name(inputs)) + "_seed" + std::to_string(seed);
}

AttnInputs Case::make_inputs() const {
  InputDist dist;
  if (inputs == InputKind::large_magnitude || inputs == InputKind::rising_keys) {
    // Scores near the fp16 range: |q.k| * scale of order 1e3..1e4 before the softmax.
    dist.magnitude = problem.dtype == DType::f16 ? 8.0 : 16.0;
    // Rising: key j scaled by 1 + j / 32, so a 64-key tile's max exceeds the last one's by hundreds
    // (in base-2 exponent units) and a stale max would overflow exp2 even in fp32.
    if (inputs == InputKind::rising_keys) dist.key_ramp = 1.0 / 32;
  } else if (inputs == InputKind::near_identical_keys) {
    dist.key_jitter = 1.0 / 64;
  }
  return random_inputs(problem, seed, dist);
}

void apply_budget_from_env() {
  if (std::getenv("RC_PARAMS")) return;
  std::string params;
  if (const char* c = std::getenv("FLASHPROBE_PROP_CASES")) params += " max_success=" + std::string(c);
  if (const char* s = std::getenv("FLASHPROBE_PROP_MAX_SIZE")) params += " max_size=" + std::string(s);
  if (const char* s = std::getenv("FLASHPROBE_PROP_SEED")) params += " seed=" + std::string(s);
  if (!params.empty()) setenv("RC_PARAMS", params.c_str(), 1);
}

std::vector<DType> restrict_dtypes(const std::vector<DType>& dtypes, const char* value) {
  if (value == nullptr || *value == '\0') return dtypes;
  const auto t = parse_dtype(value);
  if (!t) {
    std::string allowed;
    for (DType x : {DType::f16, DType::bf16, DType::f32}) allowed += (allowed.empty() ? "" : ", ") + std::string(dtype_name(x));
    throw UsageError("FLASHPROBE_PROP_DTYPE = '" + std::string(value) + "' is not a dtype; allowed: " + allowed);
  }
  std::vector<DType> kept;
  for (DType x : dtypes)
    if (x == *t) kept.push_back(x);
  return kept;
}

void restrict_dtypes_from_env(Domain& d) { d.dtypes = restrict_dtypes(d.dtypes, std::getenv("FLASHPROBE_PROP_DTYPE")); }

}  // namespace flashprobe::proptests

namespace flashprobe {
void showValue(const AttnProblem& p, std::ostream& os) {
  os << p.id() << "\n  " << nlohmann::json(p).dump();
}
namespace proptests {
void showValue(const Case& c, std::ostream& os) {
  os << "case " << c.id() << "\n  problem: " << nlohmann::json(c.problem).dump();
}
}  // namespace proptests
}  // namespace flashprobe
