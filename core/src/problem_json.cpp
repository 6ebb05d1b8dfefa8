// AttnProblem <-> JSON. Reading is strict: a typo in a field name is an error, not a silent default.
#include <nlohmann/json.hpp>
#include <set>

#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"

namespace flashprobe {

namespace {
nlohmann::json strides_json(const Strides& s) { return nlohmann::json::array({s.b, s.s, s.h, s.d}); }

template <class T>
void get(const nlohmann::json& j, const char* key, T& out) {
  if (!j.contains(key)) return;
  try {
    out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UsageError(std::string("problem field '") + key + "' has the wrong type: " + j.at(key).dump());
  }
}
}  // namespace

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
  static const std::set<std::string> known{"batch", "hq", "hkv", "sq", "sk", "d", "dv", "dtype", "out_dtype",
                                           "scale", "causal", "kv_offset", "window_left", "window_right",
                                           "softcap", "alibi_slopes", "seqlens_k", "q_strides", "k_strides",
                                           "v_strides", "o_strides", "layout"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key()))
      throw UsageError("unknown problem field '" + it.key() + "' (known: batch, hq, hkv, sq, sk, d, dv, dtype, "
                       "out_dtype, scale, causal, kv_offset, window_left, window_right, softcap, alibi_slopes, "
                       "seqlens_k, layout, q/k/v/o_strides)");
  p = AttnProblem{};
  get(j, "batch", p.batch);
  get(j, "hq", p.hq);
  get(j, "hkv", p.hkv);
  get(j, "sq", p.sq);
  get(j, "sk", p.sk);
  get(j, "d", p.d);
  p.dv = p.d;
  get(j, "dv", p.dv);
  std::string s;
  if (j.contains("dtype")) {
    get(j, "dtype", s);
    auto t = parse_dtype(s);
    if (!t) throw UsageError("problem field 'dtype'='" + s + "' is not one of f16, bf16, f32");
    p.dtype = *t;
  }
  p.out_dtype = p.dtype;
  if (j.contains("out_dtype")) {
    get(j, "out_dtype", s);
    auto t = parse_dtype(s);
    if (!t) throw UsageError("problem field 'out_dtype'='" + s + "' is not one of f16, bf16, f32");
    p.out_dtype = *t;
  }
  get(j, "scale", p.scale);
  if (j.contains("causal")) {
    const auto& c = j.at("causal");
    if (c.is_boolean()) p.causal = c.get<bool>() ? Causal::bottom_right : Causal::none;
    else {
      get(j, "causal", s);
      if (s == "none") p.causal = Causal::none;
      else if (s == "bottom_right") p.causal = Causal::bottom_right;
      else if (s == "top_left") p.causal = Causal::top_left;
      else throw UsageError("problem field 'causal'='" + s + "' is not one of none, bottom_right, top_left");
    }
  }
  get(j, "kv_offset", p.kv_offset);
  get(j, "window_left", p.window_left);
  get(j, "window_right", p.window_right);
  get(j, "softcap", p.softcap);
  get(j, "alibi_slopes", p.alibi_slopes);
  get(j, "seqlens_k", p.seqlens_k);
  if (j.contains("layout")) {
    get(j, "layout", s);
    if (s == "bshd") p.with_layout(TensorLayout::bshd);
    else if (s == "bhsd") p.with_layout(TensorLayout::bhsd);
    else throw UsageError("problem field 'layout'='" + s + "' is not one of bshd, bhsd");
  }
  auto strides = [&](const char* key, Strides& out) {
    if (!j.contains(key)) return;
    std::vector<std::int64_t> v;
    get(j, key, v);
    if (v.size() != 4) throw UsageError(std::string("problem field '") + key + "' must list 4 strides [b, s, h, d]");
    out = {v[0], v[1], v[2], v[3]};
  };
  strides("q_strides", p.q);
  strides("k_strides", p.k);
  strides("v_strides", p.v);
  strides("o_strides", p.o);
}

}  // namespace flashprobe
