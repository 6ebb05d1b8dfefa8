#include "flashprobe/proptests/generators.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"

namespace flashprobe::proptests {

namespace {

// Every choice of a draw is one RapidCheck value (inside gen::exec), so RapidCheck shrinks each one
// toward the low end of its range. A pick is an inRange at the nominal size: the whole range at
// every size, as elementOf and weightedOneOf draw.
class RcChoices final : public Choices {
 public:
  int in_range(int lo, int hi) override { return *rc::gen::inRange(lo, hi); }
  int pick(int n) override { return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, n)); }
  std::uint64_t any_u64() override { return *rc::gen::arbitrary<std::uint64_t>(); }
  int size() override {
    return *rc::gen::withSize([](int s) { return rc::gen::just(s); });
  }
};

}  // namespace

rc::Gen<AttnProblem> gen_problem(const Domain& d) {
  return rc::gen::suchThat(rc::gen::exec([d] {
                             RcChoices c;
                             return draw_problem(d, c);
                           }),
                           [d](const AttnProblem& p) { return accepts(d, p); });
}

rc::Gen<Case> gen_case(const Domain& d) {
  return rc::gen::exec([d] {
    Case c;
    c.problem = *gen_problem(d);
    RcChoices ch;
    draw_inputs(c, ch);
    draw_splits(d, c, ch);
    return c;
  });
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
