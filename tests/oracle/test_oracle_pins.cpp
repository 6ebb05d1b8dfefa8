// The oracle's numbers pinned bit for bit: the double reference (O, LSE and the sensitivities the
// bounds use), the low-precision emulation and check()'s whole verdict (every bound, margin, metric
// and reason, as CheckResult::to_json writes them with round-trip precision) on a fixed set of cases
// (data/oracle_pins.json). A speed-up that moves any value by one ulp fails here.
//
// The pins hold their cases: each stores its problem (JSON, strides and all), its input seed and the
// input distribution's numbers (with the case generator's kind name, for the reader), and the
// non-finite elements planted in it. Nothing is drawn from the case generator (proptests/), so a
// change of the generator's draws leaves every pin as it is; the inputs come from the counter-based
// generator (core/counter_inputs.h, the replay contract the device fill and the Python package
// share), and each pin also stores a digest of its inputs, so that a change of that generator is
// reported as what it is (inputs changed) and not as an oracle change.
//
// The cases (drawn once from the gate's general domain, then frozen in the file): GQA, odd head dims,
// Dv != D, f16/bf16/f32, both causal alignments, windows, soft-cap, ALiBi, per-batch key lengths,
// per-tensor strides, long rows checked on sampled rows, every input kind up to large logits, each
// checked with every row and on sampled rows; outputs that pass (the emulation) and outputs that fail
// (perturbed); inputs holding NaN and Inf under allow_nan_inputs.
//
// A deliberate change of the oracle's numbers rewrites the digests (the cases stay):
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

#include "flashprobe/core/counter_inputs.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/reference.h"

using namespace flashprobe;
using namespace flashprobe::oracle;

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

// One non-finite element planted in an input: tensor "q", "k" or "v", its storage index, the value.
struct Planted {
  std::string tensor;
  std::int64_t index = 0;
  std::string value;  // "nan", "inf", "-inf"
};

struct Pin {
  std::string id;
  AttnProblem problem;
  std::uint64_t seed = 0;
  std::string kind;  // the case generator's input kind this distribution came from (for the reader)
  InputDist dist;
  std::vector<Planted> planted;
  bool allow_nan_inputs = false;
  std::string inputs_digest, digest;
};

double value_of(const std::string& v) {
  if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (v == "inf") return INFINITY;
  if (v == "-inf") return -INFINITY;
  throw std::invalid_argument("planted value '" + v + "' (allowed: nan, inf, -inf)");
}

AttnInputs inputs_of(const Pin& p) {
  AttnInputs in = counter_inputs(p.problem, p.seed, p.dist);
  for (const Planted& x : p.planted) {
    Tensor& t = x.tensor == "q" ? in.q : x.tensor == "k" ? in.k : in.v;
    t.set(x.index, value_of(x.value));
  }
  return in;
}

std::string inputs_digest(const AttnInputs& in) {
  Fnv f;
  for (const Tensor* t : {&in.q, &in.k, &in.v}) {
    const std::uint64_t n = t->bytes.size();
    f.bytes(&n, sizeof n);
    f.bytes(t->bytes.data(), t->bytes.size());
  }
  return f.hex();
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

std::string oracle_digest(const Pin& p, const AttnInputs& in) {
  CheckOptions o;
  o.allow_nan_inputs = p.allow_nan_inputs;
  return digest(p.problem, in, o);
}

Pin pin_from_json(const nlohmann::json& j) {
  Pin p;
  p.id = j.at("id").get<std::string>();
  from_json(j.at("problem"), p.problem);
  p.seed = j.at("seed").get<std::uint64_t>();
  p.kind = j.at("kind").get<std::string>();
  const auto& d = j.at("dist");
  p.dist.magnitude = d.at("magnitude").get<double>();
  p.dist.key_jitter = d.at("key_jitter").get<double>();
  p.dist.key_ramp = d.at("key_ramp").get<double>();
  if (j.contains("planted"))
    for (const auto& x : j.at("planted")) p.planted.push_back({x.at(0).get<std::string>(), x.at(1).get<std::int64_t>(), x.at(2).get<std::string>()});
  p.allow_nan_inputs = j.value("allow_nan_inputs", false);
  p.inputs_digest = j.at("inputs_digest").get<std::string>();
  p.digest = j.at("digest").get<std::string>();
  return p;
}

nlohmann::json pin_to_json(const Pin& p) {
  nlohmann::json j{{"id", p.id},
                   {"problem", p.problem},
                   {"seed", p.seed},
                   {"kind", p.kind},
                   {"dist", {{"magnitude", p.dist.magnitude}, {"key_jitter", p.dist.key_jitter}, {"key_ramp", p.dist.key_ramp}}},
                   {"inputs_digest", p.inputs_digest},
                   {"digest", p.digest}};
  if (!p.planted.empty()) {
    j["planted"] = nlohmann::json::array();
    for (const Planted& x : p.planted) j["planted"].push_back({x.tensor, x.index, x.value});
  }
  if (p.allow_nan_inputs) j["allow_nan_inputs"] = true;
  return j;
}

std::vector<Pin> read_pins() {
  std::ifstream f(FLASHPROBE_ORACLE_PINS);
  if (!f) throw std::runtime_error(std::string("cannot read ") + FLASHPROBE_ORACLE_PINS);
  const nlohmann::json j = nlohmann::json::parse(f);
  std::vector<Pin> v;
  for (const auto& c : j.at("cases")) v.push_back(pin_from_json(c));
  return v;
}

TEST(OraclePins, ReferenceBoundsAndVerdictsUnchanged) {
  std::vector<Pin> pins = read_pins();
  ASSERT_EQ(pins.size(), 102u) << "the pins file lost or gained cases";
  if (const char* w = std::getenv("FLASHPROBE_WRITE_ORACLE_PINS"); w && *w) {
    nlohmann::json j;
    j["what"] = "tests/oracle/test_oracle_pins.cpp: stored cases (problem, input seed and distribution, planted non-finite "
                "elements) and FNV-1a digests of their inputs and of the reference, emulation and check() records";
    j["cases"] = nlohmann::json::array();
    for (Pin& p : pins) {
      const AttnInputs in = inputs_of(p);
      p.inputs_digest = inputs_digest(in);
      p.digest = oracle_digest(p, in);
      j["cases"].push_back(pin_to_json(p));
    }
    std::ofstream(w) << j.dump(1) << "\n";
    GTEST_SKIP() << "rewrote the digests of " << pins.size() << " stored cases in " << w;
  }
  int inputs_moved = 0, differ = 0;
  for (const Pin& p : pins) {
    const AttnInputs in = inputs_of(p);
    if (inputs_digest(in) != p.inputs_digest) {
      ++inputs_moved;
      ADD_FAILURE() << p.id << ": the inputs changed (core/counter_inputs.h's bits for this problem, seed and "
                    << "distribution): this pin cannot judge the oracle until the generator is restored";
      continue;
    }
    if (oracle_digest(p, in) != p.digest) {
      ++differ;
      ADD_FAILURE() << p.id << ": the oracle's numbers changed";
    }
  }
  EXPECT_EQ(inputs_moved, 0);
  EXPECT_EQ(differ, 0);
}

// The digest sees one ulp of one input element and the planted values: the pins judge the numbers
// the oracle computes from exactly these inputs.
TEST(OraclePins, DigestsSeeOneUlpOfOneInput) {
  const std::vector<Pin> pins = read_pins();
  const Pin& p = pins.at(3);
  AttnInputs in = inputs_of(p);
  ASSERT_EQ(oracle_digest(p, in), p.digest);
  const double v = in.k.get(0);
  in.k.set(0, v + ulp(p.problem.dtype, v));
  EXPECT_NE(in.k.get(0), v);
  EXPECT_NE(inputs_digest(in), p.inputs_digest);
  EXPECT_NE(oracle_digest(p, in), p.digest);
}

}  // namespace
