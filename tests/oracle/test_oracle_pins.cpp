// The oracle's numbers pinned bit for bit: the double reference (O, LSE and the sensitivities the
// bounds use), the low-precision emulation and check()'s whole verdict (every bound, margin, metric
// and reason, as CheckResult::to_json writes them with round-trip precision) on a fixed set of cases,
// against digests written by the code before the gate's oracle was made faster
// (data/oracle_pins.json). A speed-up that moves any value by one ulp fails here.
//
// The cases: the gate's general domain (GQA, odd head dims, Dv != D, f16/bf16/f32, both causal
// alignments, windows, soft-cap, ALiBi, per-batch key lengths, per-tensor strides, long rows checked on
// sampled rows, every input kind up to large logits), each checked with every row and as the gate
// checks it; outputs that pass (the emulation) and outputs that fail (perturbed); inputs holding NaN
// and Inf under allow_nan_inputs.
//
// A deliberate change of the oracle's numbers rewrites the file:
//   FLASHPROBE_WRITE_ORACLE_PINS=tests/oracle/data/oracle_pins.json build/off/tests/test_oracle --gtest_filter='OraclePins.*'
// and says why in its commit. The digests depend on the platform's libm (exp, log, tanh, cosh):
// written on x86-64 glibc (the CI image).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/reference.h"
#include "flashprobe/proptests/cases.h"

using namespace flashprobe;
using namespace flashprobe::oracle;
using flashprobe::proptests::Case;
using flashprobe::proptests::Domain;

namespace {

class Fnv {
 public:
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ b[i]) * 0x100000001b3ULL;
  }
  void doubles(const std::vector<double>& v) {
    const std::uint64_t n = v.size();
    bytes(&n, sizeof n);
    bytes(v.data(), v.size() * sizeof(double));
  }
  void text(const std::string& s) { bytes(s.data(), s.size()); }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

// The gate's general domain (plug-ins are drawn from it) with long rows and every layout.
Domain general_domain() {
  Domain d;
  d.head_dims = {32, 64, 128, 256};
  d.any_head_dim = d.dv_differs = true;
  d.dtypes = {DType::f16, DType::bf16, DType::f32};
  d.tensor_layouts = true;
  d.long_row_odds = 6;
  d.max_sq = 96;
  d.max_sk = 160;
  d.max_hq = 6;
  d.window_odds = 3;
  return d;
}

// The emulation's output (passes), or the same with every 5th element moved by a few of its ulps
// and the LSE moved (fails, by margins that differ per case).
AttnOutputs outputs(const AttnProblem& p, const Reference& emu, bool perturb) {
  AttnOutputs o{Tensor(p.out_dtype, p.o_span()), {}};
  const Strides os = p.o_strides();
  std::size_t n = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x, ++n) {
          double v = emu.o[emu.o_index(p, b, i, h, x)];
          if (perturb && n % 5 == 0 && std::isfinite(v)) v += 3 * ulp(p.out_dtype, v);
          o.o.set(offset(os, b, i, h, x), v);
        }
  for (double v : emu.lse) o.lse.push_back(static_cast<float>(perturb ? v + 1e-4 : v));
  return o;
}

std::string digest(const AttnProblem& p, const AttnInputs& in, const CheckOptions& base) {
  Fnv f;
  const Reference ref = reference(p, in), emu = emulate_low_precision(p, in);
  for (const auto* v : {&ref.o, &ref.lse, &ref.o_sens, &ref.o_top, &ref.lse_sens, &emu.o, &emu.lse}) f.doubles(*v);
  for (bool perturb : {false, true})
    for (int sampled : {0, 8}) {
      CheckOptions o = base;
      o.max_rows = sampled;
      o.seed = static_cast<std::uint64_t>(p.sk) + 1;
      f.text(check(p, in, outputs(p, emu, perturb), o).to_json().dump());
    }
  return f.hex();
}

struct Pinned {
  std::string id, digest;
};

std::vector<Pinned> compute_pins() {
  std::vector<Pinned> v;
  const Domain d = general_domain();
  for (std::uint64_t s = 0; s < 90; ++s) {
    Case c = proptests::generate_case(d, 5000 + s, 20 + static_cast<int>(s * 80 / 89));
    // Soft-cap and ALiBi on a third of the cases each, beside the draw's own.
    if (s % 3 == 1 && c.problem.softcap == 0) c.problem.softcap = s % 2 ? 5.0 : 30.0;
    if (s % 3 == 2 && c.problem.alibi_slopes.empty())
      for (int h = 0; h < c.problem.hq; ++h) c.problem.alibi_slopes.push_back(std::ldexp(1.0, -h - 1));
    v.push_back({"case " + std::to_string(s) + " " + c.id(), digest(c.problem, c.make_inputs(), {})});
  }
  // Non-finite inputs (NaN and +-Inf in Q, K and V) under IEEE semantics.
  for (std::uint64_t s = 0; s < 12; ++s) {
    const Case c = proptests::generate_case(d, 9000 + s, 40);
    AttnInputs in = c.make_inputs();
    const double bad[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY};
    Tensor* ts[] = {&in.q, &in.k, &in.v};
    for (int t = 0; t < 3; ++t)
      if (ts[t]->size() > 0) ts[t]->set(static_cast<std::int64_t>((s * 7919 + t * 104729) % ts[t]->size()), bad[(s + t) % 3]);
    CheckOptions o;
    o.allow_nan_inputs = true;
    v.push_back({"nonfinite " + std::to_string(s) + " " + c.id(), digest(c.problem, in, o)});
  }
  return v;
}

TEST(OraclePins, ReferenceBoundsAndVerdictsUnchanged) {
  const std::vector<Pinned> got = compute_pins();
  if (const char* w = std::getenv("FLASHPROBE_WRITE_ORACLE_PINS"); w && *w) {
    nlohmann::json j;
    j["what"] = "tests/oracle/test_oracle_pins.cpp: FNV-1a digests of the reference, emulation and check() records";
    for (const Pinned& p : got) j["cases"].push_back({{"id", p.id}, {"digest", p.digest}});
    std::ofstream(w) << j.dump(1) << "\n";
    GTEST_SKIP() << "wrote " << got.size() << " pins to " << w;
  }
  std::ifstream f(FLASHPROBE_ORACLE_PINS);
  ASSERT_TRUE(f) << "cannot read " << FLASHPROBE_ORACLE_PINS;
  const nlohmann::json j = nlohmann::json::parse(f);
  ASSERT_EQ(j.at("cases").size(), got.size());
  int differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(j["cases"][i]["id"].get<std::string>(), got[i].id);
    if (j["cases"][i]["digest"].get<std::string>() != got[i].digest) {
      ++differ;
      ADD_FAILURE() << got[i].id << ": the oracle's numbers changed";
    }
  }
  EXPECT_EQ(differ, 0);
}

}  // namespace
