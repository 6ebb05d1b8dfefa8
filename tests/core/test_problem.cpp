#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/problem_io.h"
#include "flashprobe/core/tensor.h"

using namespace flashprobe;

namespace {
// The error messages for field `field`, or "" if there is none.
std::string error_for(const AttnProblem& p, const std::string& field) {
  for (auto& i : validate(p))
    if (i.severity == ProblemIssue::Severity::error && i.field.rfind(field, 0) == 0) return i.message;
  return "";
}
}  // namespace

TEST(Problem, DefaultIsValid) { EXPECT_TRUE(validate(AttnProblem{}).empty()); }

TEST(Problem, EachInvalidFieldGetsAMessageNamingTheValueAndWhatIsAllowed) {
  struct Case { std::function<void(AttnProblem&)> edit; std::string field, needle; };
  const std::vector<Case> cases{
      {[](AttnProblem& p) { p.batch = 0; }, "batch", "batch=0"},
      {[](AttnProblem& p) { p.hq = 6; p.hkv = 4; }, "hq", "hq=6 is not a multiple of hkv=4"},
      {[](AttnProblem& p) { p.hkv = -1; }, "hkv", "hkv=-1"},
      {[](AttnProblem& p) { p.sq = 0; }, "sq", "sq=0"},
      {[](AttnProblem& p) { p.sk = -2; }, "sk", "sk=-2"},
      {[](AttnProblem& p) { p.d = 0; }, "d", "d=0"},
      {[](AttnProblem& p) { p.dv = -3; }, "dv", "dv=-3"},
      {[](AttnProblem& p) { p.scale = -1; }, "scale", "scale=-1"},
      {[](AttnProblem& p) { p.scale = NAN; }, "scale", "positive finite"},
      {[](AttnProblem& p) { p.sk = 4; p.kv_offset = 5; }, "kv_offset", "kv_offset=5"},
      {[](AttnProblem& p) { p.sq = 3; p.sk = 10; p.kv_offset = 5; }, "kv_offset",
       "kv_offset=5 with sq=3 means the cache holds kv_offset + sq = 8 keys, but sk=10"},
      {[](AttnProblem& p) { p.batch = 2; p.sq = 2; p.sk = 9; p.kv_offset = 7; p.seqlens_k = {9, 8}; }, "kv_offset",
       "but seqlens_k[1]=8"},
      {[](AttnProblem& p) { p.window_left = -2; }, "window_left", "window_left=-2"},
      {[](AttnProblem& p) { p.window_right = -7; }, "window_right", "window_right=-7"},
      {[](AttnProblem& p) { p.softcap = -1; }, "softcap", "softcap=-1"},
      {[](AttnProblem& p) { p.hq = 2; p.alibi_slopes = {0.5}; }, "alibi_slopes", "one per query head"},
      {[](AttnProblem& p) { p.batch = 2; p.seqlens_k = {1}; }, "seqlens_k", "one per batch"},
      {[](AttnProblem& p) { p.sk = 4; p.seqlens_k = {5}; }, "seqlens_k", "seqlens_k[0]=5"},
      {[](AttnProblem& p) { p.q = {128, 32, 64, 1}; p.sq = 2; }, "q.strides", "alias"},
      {[](AttnProblem& p) { p.k = {0, 0, 0, 0}; p.v = {10, 0, 1, 1}; p.sk = 3; }, "v.strides", "positive"},
      {[](AttnProblem& p) { p.o = {std::int64_t{1} << 62, 64, 64, 1}; p.batch = 4; }, "o.strides", "overflow"},
  };
  for (const auto& c : cases) {
    AttnProblem p;
    c.edit(p);
    const auto msg = error_for(p, c.field);
    EXPECT_NE(msg.find(c.needle), std::string::npos) << "field " << c.field << ": got '" << msg << "'";
    EXPECT_THROW(require_valid(p), UsageError);
  }
}

// docs/attention-semantics.md's KV cache: kv_offset cached tokens and sq new ones make sk = kv_offset + sq keys.
TEST(Problem, KvOffsetIsTheCacheBeforeTheNewTokens) {
  AttnProblem p;
  p.batch = 2; p.sq = 3; p.sk = 10; p.kv_offset = 7; p.causal = Causal::bottom_right;
  EXPECT_TRUE(validate(p).empty());
  p.seqlens_k = {10, 10};  // a padded cache whose every element holds kv_offset + sq keys
  EXPECT_TRUE(validate(p).empty());
  p.seqlens_k = {10, 4};
  EXPECT_TRUE(has_errors(validate(p)));
  p.seqlens_k.clear();
  p.causal = Causal::top_left;  // legal, but the new tokens would not see the cached ones before them
  const auto issues = validate(p);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].severity, ProblemIssue::Severity::warning);
  EXPECT_EQ(issues[0].field, "causal");
}

TEST(Problem, FusedQkvViewIsValidAndGappedStridesDoNotAlias) {
  AttnProblem p;
  p.batch = 2; p.sq = p.sk = 5; p.hq = p.hkv = 3; p.d = p.dv = 8;
  const std::int64_t row = 3 * 3 * 8;  // q, k, v of one token side by side
  p.q = {5 * row, row, 8, 1};
  p.k = p.q;
  p.v = p.q;
  EXPECT_FALSE(has_errors(validate(p)));
  EXPECT_EQ(p.q_span(), 1 * 5 * row + 4 * row + 2 * 8 + 7 + 1);
}

TEST(Problem, RowsWithoutKeysAreAWarningNotAnError) {
  AttnProblem p;
  p.sq = 4; p.sk = 8; p.window_left = 0; p.window_right = 0;
  p.seqlens_k = {2};  // diag = 2 - 4: rows 0 and 1 align with keys -2 and -1
  const auto issues = validate(p);
  EXPECT_FALSE(has_errors(issues));
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].severity, ProblemIssue::Severity::warning);
  EXPECT_NE(issues[0].message.find("2 query row(s)"), std::string::npos) << issues[0].message;
}

// problem_errors is what every launch checks: validate's errors, in order, and never its warnings
// (the warning needs a scan of every row; require_valid must not pay for it on each launch).
TEST(Problem, ProblemErrorsAreValidatesErrorsWithoutTheRowScan) {
  AttnProblem empty_rows;
  empty_rows.sq = 4; empty_rows.sk = 8; empty_rows.window_left = 0; empty_rows.window_right = 0;
  empty_rows.seqlens_k = {2};
  EXPECT_FALSE(validate(empty_rows).empty());
  EXPECT_TRUE(problem_errors(empty_rows).empty());
  EXPECT_NO_THROW(require_valid(empty_rows));
  AttnProblem bad;
  bad.hq = 3; bad.hkv = 2; bad.kv_offset = -1; bad.softcap = -1;
  AttnProblem bad_strides;
  bad_strides.sq = bad_strides.sk = 4;
  bad_strides.q = {4 * 64, 1, 64, 1};  // token stride 1 < the row's 64 dims: rows alias
  for (const AttnProblem& p : {bad, bad_strides}) {
    std::vector<std::string> want, got;
    for (auto& i : validate(p))
      if (i.severity == ProblemIssue::Severity::error) want.push_back(i.field + ": " + i.message);
    for (auto& i : problem_errors(p)) {
      EXPECT_EQ(i.severity, ProblemIssue::Severity::error) << i.message;
      got.push_back(i.field + ": " + i.message);
    }
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(got, want);
    EXPECT_THROW(require_valid(p), UsageError);
  }
}

TEST(Problem, MaskFollowsBottomRightAndTopLeftAlignment) {
  AttnProblem p;
  p.sq = 2; p.sk = 5; p.causal = Causal::bottom_right;
  EXPECT_TRUE(p.visible(0, 0, 3));
  EXPECT_FALSE(p.visible(0, 0, 4));
  EXPECT_TRUE(p.visible(0, 1, 4));
  p.causal = Causal::top_left;
  EXPECT_TRUE(p.visible(0, 0, 0));
  EXPECT_FALSE(p.visible(0, 0, 1));
  p.causal = Causal::bottom_right;
  p.window_left = 1;
  EXPECT_FALSE(p.visible(0, 1, 2));
  EXPECT_TRUE(p.visible(0, 1, 3));
}

TEST(Problem, JsonRoundTripPreservesEveryField) {
  AttnProblem p;
  p.batch = 3; p.hq = 6; p.hkv = 2; p.sq = 7; p.sk = 19; p.d = 80; p.dv = 96;
  p.dtype = DType::bf16; p.out_dtype = DType::f32; p.scale = 0.25; p.causal = Causal::top_left;
  p.kv_offset = 12; p.window_left = 4; p.window_right = 0; p.softcap = 30;
  p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625};
  p.seqlens_k = {19, 0, 7};
  p.with_layout(TensorLayout::bhsd);
  const nlohmann::json j = p;
  const AttnProblem back = nlohmann::json::parse(j.dump()).get<AttnProblem>();
  EXPECT_EQ(back, p);
  EXPECT_EQ(back.id(), p.id());
  EXPECT_NE(p.id().find("bhsd"), std::string::npos);
}

TEST(Problem, JsonReadingIsStrict) {
  EXPECT_THROW(nlohmann::json::parse(R"({"hq": 2, "hk": 1})").get<AttnProblem>(), UsageError);
  EXPECT_THROW(nlohmann::json::parse(R"({"hq": "two"})").get<AttnProblem>(), UsageError);
  EXPECT_THROW(nlohmann::json::parse(R"({"dtype": "f8"})").get<AttnProblem>(), UsageError);
  EXPECT_THROW(nlohmann::json::parse(R"({"causal": "diagonal"})").get<AttnProblem>(), UsageError);
  const auto p = nlohmann::json::parse(R"({"d": 40, "causal": "bottom_right", "dtype": "bf16"})").get<AttnProblem>();
  EXPECT_EQ(p.dv, 40);
  EXPECT_EQ(p.causal, Causal::bottom_right);
  EXPECT_EQ(p.out_dtype, DType::bf16);
}

namespace {
// The UsageError of reading `text` as a problem ("" when it reads).
std::string refusal(const std::string& text) {
  try {
    (void)nlohmann::json::parse(text).get<AttnProblem>();
    return "";
  } catch (const UsageError& e) {
    return e.what();
  }
}
}  // namespace

// A lenient reader narrowed these to 1, 4, 1, 1 and passed the check; each is refused, naming the
// field and showing the value as written.
TEST(Problem, JsonIntegersMustBeJsonIntegersInRange) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {R"({"batch": 4294967297})", {"'batch'", "4294967297"}},
      {R"({"sq": 4294967300})", {"'sq'", "4294967300"}},
      {R"({"sk": -4294967300})", {"'sk'", "-4294967300"}},
      {R"({"batch": 18446744073709551615})", {"'batch'", "18446744073709551615"}},
      {R"({"batch": 1.7})", {"'batch'", "1.7", "integer"}},
      {R"({"batch": true})", {"'batch'", "true", "integer"}},
      {R"({"hq": 2, "hkv": 2.0})", {"'hkv'", "2.0"}},
      {R"({"window_left": null})", {"'window_left'", "null"}},
      {R"({"seqlens_k": [1, 1.5]})", {"'seqlens_k[1]'", "1.5"}},
      {R"({"seqlens_k": 3})", {"'seqlens_k'", "list"}},
      {R"({"q_strides": [1, 2, 3, true]})", {"'q_strides[3]'", "true"}},
      {R"({"scale": true})", {"'scale'", "true", "number"}},
      {R"({"softcap": "1"})", {"'softcap'", "\"1\""}},
      {R"({"alibi_slopes": [false]})", {"'alibi_slopes[0]'", "false"}},
  };
  for (const auto& [text, needles] : cases) {
    const std::string e = refusal(text);
    ASSERT_FALSE(e.empty()) << text << " was read";
    for (const auto& n : needles) EXPECT_NE(e.find(n), std::string::npos) << text << ": " << e;
  }
  // Integers in range, of either JSON integer kind, still read.
  const auto p = nlohmann::json::parse(R"({"batch": 2147483647, "window_left": -1, "q_strides": [0, 0, 0, 0]})")
                     .get<AttnProblem>();
  EXPECT_EQ(p.batch, 2147483647);
  EXPECT_EQ(p.window_left, -1);
}

// A JSON file holds 4294967300 as an unsigned integer, Python's binding hands it over as a signed one:
// the same value gets the same message either way (the Python package's test compares the two).
TEST(Problem, OutOfRangeMessageDoesNotDependOnTheIntegerKind) {
  const auto message = [](const nlohmann::json& j) {
    try {
      (void)j.get<AttnProblem>();
      return std::string();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  };
  const std::string from_text = message(nlohmann::json::parse(R"({"sq": 4294967300})"));
  const std::string from_signed = message(nlohmann::json{{"sq", std::int64_t{4294967300}}});
  ASSERT_FALSE(from_text.empty());
  EXPECT_EQ(from_text, from_signed);
  EXPECT_NE(from_text.find("it must be in [-2147483648, 2147483647]"), std::string::npos) << from_text;
}

// One spelling per value, the one to_json writes and check --help lists: aliases are refused with the
// name to write ("causal": true is ambiguous: torch's is_causal is top_left, a KV cache bottom_right).
TEST(Problem, JsonNamesAreTheOnesTheWriterUses) {
  for (const char* alias : {"half", "fp16", "float16", "bfloat16", "fp32", "float32", "float"})
    for (const char* field : {"dtype", "out_dtype"}) {
      const std::string e = refusal(std::string(R"({")") + field + R"(": ")" + alias + R"("})");
      EXPECT_NE(e.find(std::string("'") + field + "'='" + alias + "'"), std::string::npos) << e;
      EXPECT_NE(e.find("write \""), std::string::npos) << e;
    }
  for (const char* b : {"true", "false"}) {
    const std::string e = refusal(std::string(R"({"causal": )") + b + "}");
    EXPECT_NE(e.find("bottom_right"), std::string::npos) << b << ": " << e;
    EXPECT_NE(e.find("top_left"), std::string::npos) << b << ": " << e;
  }
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    AttnProblem p;
    p.dtype = p.out_dtype = t;
    for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left}) {
      p.causal = c;
      const nlohmann::json j = p;
      EXPECT_EQ(nlohmann::json::parse(j.dump()).get<AttnProblem>(), p) << j.dump();
    }
  }
}

// The reader's known fields are the table the CLI's help prints: every field to_json writes is in it.
TEST(Problem, EveryWrittenFieldIsInTheFieldTable) {
  AttnProblem p;
  p.with_layout(TensorLayout::bhsd);
  const nlohmann::json j = p;
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool listed = false;
    for (const auto& f : problem_fields()) listed = listed || f.name == it.key();
    EXPECT_TRUE(listed) << it.key();
  }
  EXPECT_EQ(problem_fields().size(), j.size() + 1);  // + "layout", which sets the strides
}

TEST(Problem, RandomInputsAreNeverZeroAndRoundedToTheDtype) {
  AttnProblem p;
  p.dtype = DType::bf16; p.sq = 3; p.sk = 9; p.d = 16; p.dv = 16;
  const auto in = random_inputs(p, 42);
  ASSERT_EQ(in.k.size(), p.k_span());
  for (std::int64_t i = 0; i < in.k.size(); ++i) ASSERT_NE(in.k.get(i), 0.0);
  const auto again = random_inputs(p, 42);
  EXPECT_EQ(in.q.bytes, again.q.bytes);
  EXPECT_NE(random_inputs(p, 43).q.bytes, in.q.bytes);
}

// The inputs of a seed never change (saved cases and RC_PARAMS reproductions depend on it): the
// same stream as the plain definition -- draw mag * N(0, 1), round to the dtype, redraw a zero.
TEST(Problem, RandomInputsFollowThePlainDefinitionBitForBit) {
  for (DType t : {DType::f16, DType::bf16, DType::f32})
    for (double mag : {1.0, 8.0}) {
      AttnProblem p;
      p.dtype = t; p.out_dtype = t; p.batch = 2; p.hq = 2; p.hkv = 1; p.sq = 5; p.sk = 33; p.d = 24; p.dv = 24;
      InputDist dist;
      dist.magnitude = mag;
      const auto in = random_inputs(p, 7, dist);
      std::mt19937_64 rng(7);
      std::normal_distribution<double> nd(0.0, 1.0);
      const auto plain = [&](double m) {
        for (;;)
          if (const double v = round_to(t, m * nd(rng)); v != 0.0) return v;
      };
      Tensor q(t, p.q_span()), k(t, p.k_span()), v(t, p.v_span());
      for (std::int64_t i = 0; i < q.size(); ++i) q.set(i, plain(mag));
      for (std::int64_t i = 0; i < v.size(); ++i) v.set(i, plain(1.0));
      for (std::int64_t i = 0; i < k.size(); ++i) k.set(i, plain(mag));
      EXPECT_EQ(in.q.bytes, q.bytes) << dtype_name(t);
      EXPECT_EQ(in.v.bytes, v.bytes) << dtype_name(t);
      EXPECT_EQ(in.k.bytes, k.bytes) << dtype_name(t);
    }
}

// key_ramp scales key j of the plain draw by (1 + ramp * j), rounded once, at every (batch, head):
// the scores then grow along the keys. q and v are the plain draw.
TEST(Problem, RandomInputsKeyRampScalesKeyJ) {
  for (DType t : {DType::f16, DType::bf16}) {
    AttnProblem p;
    p.dtype = t; p.out_dtype = t; p.batch = 2; p.hq = 2; p.hkv = 2; p.sq = 3; p.sk = 70; p.d = 8; p.dv = 8;
    InputDist plain, ramp;
    plain.magnitude = ramp.magnitude = 8.0;
    ramp.key_ramp = 1.0 / 32;
    const auto a = random_inputs(p, 11, plain), b = random_inputs(p, 11, ramp);
    EXPECT_EQ(a.q.bytes, b.q.bytes);
    EXPECT_EQ(a.v.bytes, b.v.bytes);
    const Strides ks = p.k_strides();
    for (int bb = 0; bb < p.batch; ++bb)
      for (int j = 0; j < p.sk; ++j)
        for (int h = 0; h < p.hkv; ++h)
          for (int x = 0; x < p.d; ++x) {
            const std::int64_t i = offset(ks, bb, j, h, x);
            ASSERT_EQ(b.k.get(i), round_to(t, a.k.get(i) * (1.0 + j / 32.0))) << dtype_name(t) << " key " << j;
          }
    // The last key tile's largest |k| is far above the first's.
    double first = 0, last = 0;
    for (int j = 0; j < 64; ++j) first = std::max(first, std::abs(b.k.get(offset(ks, 0, j, 0, 0))));
    for (int j = 64; j < p.sk; ++j) last = std::max(last, std::abs(b.k.get(offset(ks, 0, j, 0, 0))));
    EXPECT_GT(last, first);
  }
}

TEST(Problem, RandomNormalFollowsTheSameRule) {
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const Tensor got = random_normal(t, 5000, 3);
    std::mt19937_64 rng(3);
    std::normal_distribution<double> nd(0.0, 1.0);
    Tensor want(t, 5000);
    for (std::int64_t i = 0; i < want.size(); ++i)
      for (;;)
        if (const double v = round_to(t, nd(rng)); v != 0.0) {
          want.set(i, v);
          break;
        }
    EXPECT_EQ(got.bytes, want.bytes) << dtype_name(t);
  }
}

TEST(Problem, NoKeysIsValidForAnyBatchAndLayout) {
  // Sk = 0 makes the contiguous K/V strides 0; that must not be reported as aliasing.
  AttnProblem p;
  p.batch = 3; p.hq = 4; p.hkv = 2; p.sk = 0;
  EXPECT_FALSE(has_errors(validate(p)));
  EXPECT_FALSE(has_errors(validate(AttnProblem(p).with_layout(TensorLayout::bhsd))));
}
