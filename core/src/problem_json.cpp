// AttnProblem <-> JSON. Reading is strict: a typo in a field name, a value of the wrong JSON type, an
// integer outside the field's range and a spelling other than the one the writer uses are errors
// naming the field and the value as written, never a silent default, narrowing or alias.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/problem_io.h"
#include "flashprobe/core/record.h"

namespace flashprobe {

namespace {
nlohmann::json strides_json(const Strides& s) { return nlohmann::json::array({s.b, s.s, s.h, s.d}); }

constexpr ProblemField kFields[] = {
    {"batch", "integer >= 1 (default 1)"},
    {"hq", "integer >= 1, a multiple of hkv: query heads (default 1)"},
    {"hkv", "integer >= 1: key/value heads; query head h reads kv head h / (hq / hkv) (default 1)"},
    {"sq", "integer >= 1: query rows (default 1)"},
    {"sk", "integer >= 0: keys (default 1)"},
    {"d", "integer >= 1: head dimension of Q and K (default 64)"},
    {"dv", "integer >= 1: head dimension of V and O (default d)"},
    {"dtype", "\"f16\", \"bf16\" or \"f32\": Q, K, V as stored (default \"f16\")"},
    {"out_dtype", "\"f16\", \"bf16\" or \"f32\": O as stored (default dtype)"},
    {"scale", "number >= 0: score scale; 0 = 1/sqrt(d) (default 0)"},
    {"causal", "\"none\", \"bottom_right\" (the KV-cache diagonal, key j <= i + sk - sq) or \"top_left\" "
               "(torch's is_causal, j <= i) (default \"none\"); windows and ALiBi are measured from the same "
               "diagonal"},
    {"kv_offset", "integer in [0, sk]: tokens already in the KV cache; when > 0, sk (and every seqlens_k) "
                  "must equal kv_offset + sq (default 0, not stated)"},
    {"window_left", "integer >= 0, or -1 for unbounded: keys left of the diagonal a row sees (default -1)"},
    {"window_right", "integer >= 0, or -1 for unbounded: keys right of the diagonal a row sees (default -1)"},
    {"softcap", "number >= 0: s = cap * tanh(s / cap); 0 = off (default 0)"},
    {"alibi_slopes", "list of hq finite numbers: s -= slope[h] * |i + diagonal - j|; [] = off (default [])"},
    {"seqlens_k", "list of batch integers in [0, sk]: keys of each batch element; [] = sk for all (default [])"},
    {"layout", "\"bshd\" or \"bhsd\": sets q/k/v/o_strides to that dense layout"},
    {"q_strides", "[b, s, h, d] integers (elements); default dense BSHD"},
    {"k_strides", "[b, s, h, d] integers (elements); default dense BSHD"},
    {"v_strides", "[b, s, h, d] integers (elements); default dense BSHD"},
    {"o_strides", "[b, s, h, d] integers (elements); default dense BSHD"},
};

[[noreturn]] void wrong(const std::string& key, const nlohmann::json& v, const std::string& need) {
  throw UsageError("problem field '" + key + "' has the wrong type: " + v.dump() + " (" + need + ")");
}

// A JSON integer (not 1.0, not true) within [lo, hi]; `where` names the field or the list entry.
std::int64_t integer(const std::string& where, const nlohmann::json& v, std::int64_t lo, std::int64_t hi) {
  const auto out_of_range = [&] {
    return UsageError("problem field '" + where + "' = " + v.dump() + " is out of range: it must be in [" +
                      std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) throw out_of_range();
    return static_cast<std::int64_t>(u);
  }
  if (!v.is_number_integer()) wrong(where, v, "an integer is needed");
  const auto s = v.get<std::int64_t>();
  if (s < lo || s > hi) throw out_of_range();
  return s;
}

constexpr std::int64_t kIntMin = std::numeric_limits<int>::min(), kIntMax = std::numeric_limits<int>::max();

void read_int(const nlohmann::json& j, const char* key, int& out) {
  if (j.contains(key)) out = static_cast<int>(integer(key, j.at(key), kIntMin, kIntMax));
}

void read_number(const nlohmann::json& j, const char* key, double& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  if (!v.is_number()) wrong(key, v, "a number is needed");
  out = v.get<double>();
}

const nlohmann::json& list(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_array()) wrong(key, v, "a list is needed");
  return v;
}

// A string field that must be one of `names` (written exactly so: the names the writer uses).
std::string choice(const nlohmann::json& j, const char* key, const std::string& names) {
  const auto& v = j.at(key);
  if (!v.is_string()) wrong(key, v, "a string is needed: one of " + names);
  return v.get<std::string>();
}

// Another common name of a dtype, for the hint in a refusal (one spelling per value is accepted).
std::optional<DType> dtype_alias(const std::string& s) {
  if (s == "fp16" || s == "float16" || s == "half") return DType::f16;
  if (s == "bfloat16") return DType::bf16;
  if (s == "fp32" || s == "float32" || s == "float") return DType::f32;
  return std::nullopt;
}

DType read_dtype(const nlohmann::json& j, const char* key) {
  const std::string s = choice(j, key, "f16, bf16, f32");
  if (auto t = parse_dtype(s)) return *t;
  std::string msg = "problem field '" + std::string(key) + "'='" + s + "' is not one of f16, bf16, f32";
  if (auto alias = dtype_alias(s)) msg += " (write \"" + std::string(dtype_name(*alias)) + "\")";
  throw UsageError(msg);
}
}  // namespace

std::span<const ProblemField> problem_fields() { return kFields; }

AttnProblem read_problem_file(const std::string& path) {
  AttnProblem p;
  try {
    from_json(read_json_file(path), p);
    require_valid(p);
  } catch (const UsageError& e) {
    const std::string m = e.what();
    throw UsageError(m.rfind(path + ":", 0) == 0 ? m : path + ": " + m);
  }
  return p;
}

void to_json(nlohmann::json& j, const AttnProblem& p) {
  j = nlohmann::json{{"batch", p.batch},
                     {"hq", p.hq},
                     {"hkv", p.hkv},
                     {"sq", p.sq},
                     {"sk", p.sk},
                     {"d", p.d},
                     {"dv", p.dv},
                     {"dtype", std::string(dtype_name(p.dtype))},
                     {"out_dtype", std::string(dtype_name(p.out_dtype))},
                     {"scale", p.scale},
                     {"causal", std::string(causal_name(p.causal))},
                     {"kv_offset", p.kv_offset},
                     {"window_left", p.window_left},
                     {"window_right", p.window_right},
                     {"softcap", p.softcap},
                     {"alibi_slopes", p.alibi_slopes},
                     {"seqlens_k", p.seqlens_k}};
  if (!p.q.is_zero()) j["q_strides"] = strides_json(p.q);
  if (!p.k.is_zero()) j["k_strides"] = strides_json(p.k);
  if (!p.v.is_zero()) j["v_strides"] = strides_json(p.v);
  if (!p.o.is_zero()) j["o_strides"] = strides_json(p.o);
}

void from_json(const nlohmann::json& j, AttnProblem& p) {
  if (!j.is_object()) throw UsageError("a problem must be a JSON object, got: " + j.dump());
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const auto& f : kFields) known = known || f.name == it.key();
    if (!known) {
      std::string names;
      for (const auto& f : kFields) names += (names.empty() ? "" : ", ") + std::string(f.name);
      throw UsageError("unknown problem field '" + it.key() + "' (known: " + names + ")");
    }
  }
  p = AttnProblem{};
  read_int(j, "batch", p.batch);
  read_int(j, "hq", p.hq);
  read_int(j, "hkv", p.hkv);
  read_int(j, "sq", p.sq);
  read_int(j, "sk", p.sk);
  read_int(j, "d", p.d);
  p.dv = p.d;
  read_int(j, "dv", p.dv);
  if (j.contains("dtype")) p.dtype = read_dtype(j, "dtype");
  p.out_dtype = p.dtype;
  if (j.contains("out_dtype")) p.out_dtype = read_dtype(j, "out_dtype");
  read_number(j, "scale", p.scale);
  if (j.contains("causal")) {
    const auto& c = j.at("causal");
    if (c.is_boolean())  // true is ambiguous: torch's is_causal means top_left, a KV cache bottom_right
      throw UsageError("problem field 'causal' = " + c.dump() + " is not accepted: write \"bottom_right\" (the "
                       "KV-cache diagonal), \"top_left\" (torch's is_causal) or \"none\"");
    const std::string s = choice(j, "causal", "none, bottom_right, top_left");
    if (s == "none") p.causal = Causal::none;
    else if (s == "bottom_right") p.causal = Causal::bottom_right;
    else if (s == "top_left") p.causal = Causal::top_left;
    else throw UsageError("problem field 'causal'='" + s + "' is not one of none, bottom_right, top_left");
  }
  read_int(j, "kv_offset", p.kv_offset);
  read_int(j, "window_left", p.window_left);
  read_int(j, "window_right", p.window_right);
  read_number(j, "softcap", p.softcap);
  if (j.contains("alibi_slopes")) {
    const auto& v = list(j, "alibi_slopes");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number()) wrong("alibi_slopes[" + std::to_string(i) + "]", v[i], "a number is needed");
      p.alibi_slopes.push_back(v[i].get<double>());
    }
  }
  if (j.contains("seqlens_k")) {
    const auto& v = list(j, "seqlens_k");
    for (std::size_t i = 0; i < v.size(); ++i)
      p.seqlens_k.push_back(static_cast<int>(integer("seqlens_k[" + std::to_string(i) + "]", v[i], kIntMin, kIntMax)));
  }
  if (j.contains("layout")) {
    const std::string s = choice(j, "layout", "bshd, bhsd");
    if (s == "bshd") p.with_layout(TensorLayout::bshd);
    else if (s == "bhsd") p.with_layout(TensorLayout::bhsd);
    else throw UsageError("problem field 'layout'='" + s + "' is not one of bshd, bhsd");
  }
  auto strides = [&](const char* key, Strides& out) {
    if (!j.contains(key)) return;
    const auto& v = list(j, key);
    if (v.size() != 4) throw UsageError(std::string("problem field '") + key + "' must list 4 strides [b, s, h, d]");
    std::int64_t s[4];
    for (std::size_t i = 0; i < 4; ++i)
      s[i] = integer(std::string(key) + "[" + std::to_string(i) + "]", v[i], std::numeric_limits<std::int64_t>::min(),
                     std::numeric_limits<std::int64_t>::max());
    out = {s[0], s[1], s[2], s[3]};
  };
  strides("q_strides", p.q);
  strides("k_strides", p.k);
  strides("v_strides", p.v);
  strides("o_strides", p.o);
}

}  // namespace flashprobe
