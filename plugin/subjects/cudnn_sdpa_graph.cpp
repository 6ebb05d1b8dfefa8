// cuDNN's flash SDPA forward as a backend graph and its plan (cudnn_sdpa_graph.h says which graph).
#include "cudnn_sdpa_graph.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

namespace fp_cudnn {

namespace {

const char* type_name(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_FLOAT: return "f32";
    case CUDNN_DATA_HALF: return "f16";
    case CUDNN_DATA_BFLOAT16: return "bf16";
    case CUDNN_DATA_INT32: return "i32";
    case CUDNN_DATA_BOOLEAN: return "bool";
    default: return "?";
  }
}

std::string dims_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

// The operations of the graph, each finalized as it is made.
struct Builder {
  Plan& plan;
  std::vector<Desc*> ops;
  int64_t next_virtual = 100;

  Desc& make(cudnnBackendDescriptorType_t t) {
    plan.keep.push_back(std::make_unique<Desc>(t));
    return *plan.keep.back();
  }
  // A tensor [b, h, s, x] with its strides; uid 0 makes a virtual one with an id of its own.
  Desc& tensor(const char* name, cudnnDataType_t type, std::vector<int64_t> dims, std::vector<int64_t> strides,
               int64_t uid = 0, bool by_value = false) {
    Desc& t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const bool is_virtual = uid == 0;
    if (is_virtual) uid = next_virtual++;
    const int64_t align = 16, n = static_cast<int64_t>(dims.size());
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), n)
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), n)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual);
    if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &by_value);
    return t.finalize(std::string("tensor ") + name + " uid " + std::to_string(uid) + " " + type_name(type) + " " +
                      dims_text(dims) + " strides " + dims_text(strides) + (is_virtual ? " virtual" : "") +
                      (by_value ? " by value" : ""));
  }
  Desc& scalar(const char* name, cudnnDataType_t type, int64_t uid) { return tensor(name, type, {1, 1, 1, 1}, {1, 1, 1, 1}, uid, true); }

  // y = mode(x[, b][, t]) computed in `prec` (with an axis for GEN_INDEX and the index arithmetic).
  void pointwise(const char* name, cudnnPointwiseMode_t mode, cudnnDataType_t prec, const Desc& x, const Desc* b, const Desc* t,
                 const Desc& y, int64_t axis = -1) {
    Desc& pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode).set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec);
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    pw.finalize(std::string("pointwise descriptor ") + name);
    Desc& op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw).set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    const float one = 1;  // the defaults, set as the frontend sets them
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, &one).set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, &one);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize(std::string("pointwise operation ") + name);
    ops.push_back(&op);
  }
  void reduction(const char* name, cudnnReduceTensorOp_t mode, const Desc& x, const Desc& y) {
    Desc& r = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t f = CUDNN_DATA_FLOAT;
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode).set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f);
    const bool deterministic = false;  // the default, set from 9.11 as the frontend sets it
    if (cudnn().version >= 91100) r.set(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, &deterministic);
    r.finalize(std::string("reduction descriptor ") + name);
    Desc& op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x).set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r).finalize(std::string("reduction operation ") + name);
    ops.push_back(&op);
  }
  void matmul(const char* name, const Desc& a, const Desc& b, const Desc& c) {
    Desc& m = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f = CUDNN_DATA_FLOAT;
    m.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f).finalize(std::string("matmul descriptor ") + name);
    Desc& op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a).set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c).set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .finalize(std::string("matmul operation ") + name);
    ops.push_back(&op);
  }
  // cuDNN's SDPA forward as one operation (CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, cuDNN 9.13.1+).
  void sdpa_fwd(const Desc& q, const Desc& k, const Desc& v, const Desc& o, const Desc& stats, const Desc& scale) {
    Desc& op = make(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q).set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k)
        .set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v).set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o)
        .set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, stats).set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale)
        .finalize("SDPA forward operation");
    ops.push_back(&op);
  }
  // The operation graph of the operations made, finalized.
  Desc& graph(const std::string& what) {
    cudnnHandle_t h = cudnn().handle;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (Desc* op : ops) raw.push_back(op->get());
    Desc& graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw.data(), static_cast<int64_t>(raw.size()))
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h)
        .finalize("operation graph of the " + what + " (" + std::to_string(raw.size()) + " operations)");
    return graph;
  }
};

// [b, s, h, x] element strides (the ABI's order) as cuDNN's [b, h, s, x].
std::vector<int64_t> bhsd(const int64_t* st) { return {st[0], st[2], st[1], st[3]}; }

cudnnDataType_t io_type(const fp_problem_v1& p) { return p.dtype == FP_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF; }

// The unified form: one SDPA forward operation on Q, K (not transposed), V, O, the stats and the scale.
Desc& unified_graph(Builder& g, const fp_problem_v1& p) {
  const cudnnDataType_t io = io_type(p), f = CUDNN_DATA_FLOAT;
  const int64_t b = p.batch, hq = p.hq, hk = p.hkv, sq = p.sq, sk = p.sk, d = p.d, dv = p.dv;
  Desc& scale = g.tensor("scale", f, {1}, {1}, kScale, true);  // one-dimensional here, as the frontend makes it
  Desc& k = g.tensor("K", io, {b, hk, sk, d}, bhsd(p.k_strides), kK);
  Desc& v = g.tensor("V", io, {b, hk, sk, dv}, bhsd(p.v_strides), kV);
  Desc& q = g.tensor("Q", io, {b, hq, sq, d}, bhsd(p.q_strides), kQ);
  Desc& stats = g.tensor("stats (LSE)", f, {b, hq, sq, 1}, {hq * sq, sq, 1, 1}, kStats);
  Desc& out = g.tensor("O", io, {b, hq, sq, dv}, bhsd(p.o_strides), kO);
  g.sdpa_fwd(q, k, v, out, stats, scale);
  return g.graph(form_name(Form::unified));
}

// The composite form: the pointwise / reduction / matmul graph.
Desc& composite_graph(Builder& g, const fp_problem_v1& p, const BuildOptions& o) {
  const cudnnDataType_t io = io_type(p), f = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32;
  const int64_t b = p.batch, hq = p.hq, hk = p.hkv, sq = p.sq, sk = p.sk, d = p.d, dv = p.dv;
  Desc& q = g.tensor("Q", io, {b, hq, sq, d}, bhsd(p.q_strides), kQ);
  // Kᵀ: [b, hkv, d, sk], the transpose by strides.
  Desc& kt = g.tensor("K^T", io, {b, hk, d, sk}, {p.k_strides[0], p.k_strides[2], p.k_strides[3], p.k_strides[1]}, kK);
  Desc& v = g.tensor("V", io, {b, hk, sk, dv}, bhsd(p.v_strides), kV);
  Desc& out = g.tensor("O", io, {b, hq, sq, dv}, bhsd(p.o_strides), kO);
  const std::vector<int64_t> row_dims{b, hq, sq, 1}, row_strides{hq * sq, sq, 1, 1};
  const std::vector<int64_t> s_dims{b, hq, sq, sk}, s_strides{hq * sq * sk, sq * sk, sk, 1};
  Desc& stats = g.tensor("stats (LSE)", f, row_dims, row_strides, kStats);
  Desc& scale = g.scalar("scale", f, kScale);

  Desc& s = g.tensor("S", f, s_dims, s_strides);
  g.matmul("bmm1 Q.K^T", q, kt, s);
  Desc* last = &g.tensor("S*scale", f, s_dims, s_strides);
  g.pointwise("MUL scale", CUDNN_POINTWISE_MUL, f, s, &scale, nullptr, *last);
  if (p.causal != FP_CAUSAL_NONE) {
    // Key j stays visible when row (+ sk - sq for bottom-right) >= j; the others become the mask value.
    Desc& row0 = g.tensor("row index", i32, s_dims, s_strides);
    g.pointwise("GEN_INDEX row", CUDNN_POINTWISE_GEN_INDEX, f, *last, nullptr, nullptr, row0, 2);
    Desc& col = g.tensor("col index", i32, s_dims, s_strides);
    g.pointwise("GEN_INDEX col", CUDNN_POINTWISE_GEN_INDEX, f, *last, nullptr, nullptr, col, 3);
    Desc* row = &row0;
    if (p.causal == FP_CAUSAL_BOTTOM_RIGHT) {
      Desc& skv = g.scalar("sk", i32, kSk);
      Desc& plus = g.tensor("row+sk", i32, s_dims, s_strides);
      g.pointwise("ADD sk", CUDNN_POINTWISE_ADD, i32, *row, &skv, nullptr, plus);
      Desc& sqv = g.scalar("sq", i32, kSq);
      Desc& minus = g.tensor("row+sk-sq", i32, s_dims, s_strides);
      g.pointwise("SUB sq", CUDNN_POINTWISE_SUB, i32, plus, &sqv, nullptr, minus);
      row = &minus;
    }
    Desc& keep = g.tensor("row>=col", CUDNN_DATA_BOOLEAN, s_dims, s_strides);
    g.pointwise("CMP_GE", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *row, &col, nullptr, keep);
    Desc& value = g.scalar("mask value", f, kMaskValue);
    Desc& masked = g.tensor("S masked", f, s_dims, s_strides);
    g.pointwise("BINARY_SELECT", CUDNN_POINTWISE_BINARY_SELECT, f, *last, &value, &keep, masked);
    last = &masked;
  }
  Desc& mx = g.tensor("row max", f, row_dims, row_strides);
  g.reduction("MAX", CUDNN_REDUCE_TENSOR_MAX, *last, mx);
  Desc& sub = g.tensor("S-max", f, s_dims, s_strides);
  g.pointwise("SUB max", CUDNN_POINTWISE_SUB, f, *last, &mx, nullptr, sub);
  Desc& ex = g.tensor("exp", f, s_dims, s_strides);
  g.pointwise("EXP", CUDNN_POINTWISE_EXP, f, sub, nullptr, nullptr, ex);
  Desc& sum = g.tensor("row sum", f, row_dims, row_strides);
  g.reduction("ADD", CUDNN_REDUCE_TENSOR_ADD, ex, sum);
  Desc& lg = g.tensor("log sum", f, row_dims, row_strides);
  g.pointwise("LOG", CUDNN_POINTWISE_LOG, f, sum, nullptr, nullptr, lg);
  g.pointwise("ADD max+log", CUDNN_POINTWISE_ADD, f, mx, &lg, nullptr, stats);
  Desc& pr = g.tensor("P", o.p_in_io_type ? io : f, s_dims, s_strides);
  g.pointwise("DIV sum", CUDNN_POINTWISE_DIV, f, ex, &sum, nullptr, pr);
  g.matmul("bmm2 P.V", pr, v, out);
  return g.graph(form_name(Form::composite));
}

// The engine search: each source of configurations in turn, each outcome in `summary`.
struct Search {
  Plan& plan;
  const BuildOptions& o;
  std::vector<std::string> summary;  // what each source gave
  int plan_failures = 0;
  std::string first_plan_failure;
  std::string form;  // which graph: the plans' sources name it

  bool done() const { return plan.plan && o.plans_per_source == 0; }
  // A plan from cfg; the first one made is kept.
  void try_plan(std::unique_ptr<Desc> cfg, const std::string& source) {
    cudnnHandle_t h = cudnn().handle;
    auto p = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    p->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h).set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *cfg);
    // The plan's finalize compiles the engine's kernels where they are compiled at run time: its time
    // is the cost of each new shape the gate draws.
    const auto t0 = std::chrono::steady_clock::now();
    const cudnnStatus_t st = cudnn().Finalize(p->get());
    const std::string took = " (" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()) + " ms)";
    if (st != CUDNN_STATUS_SUCCESS) {
      const std::string last = last_error(), what = status_name(st) + (last.empty() ? "" : " (" + last + ")");
      trace("finalize execution plan from " + source + ": " + what + took);
      if (plan_failures++ == 0) first_plan_failure = what;
      return;
    }
    trace("finalize execution plan from " + source + ": " + status_name(CUDNN_STATUS_SUCCESS) + took);
    int64_t ws = 0, got = 0;
    check(cudnn().GetAttribute(p->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws),
          "workspace size of the plan from " + source);
    trace("plan from " + source + ": workspace " + std::to_string(ws) + " bytes");
    if (plan.plan) return;
    plan.keep.push_back(std::move(cfg));
    plan.plan = std::move(p);
    plan.workspace = ws;
    plan.source = form + ", " + source;
  }

  void heuristics(const Desc& graph, cudnnBackendHeurMode_t mode, const char* name) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const std::string src = std::string("heuristics ") + name;
    try {
      heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
      heur.finalize(src);
    } catch (const CudnnError& e) {
      summary.push_back(e.what());
      return;
    }
    int64_t n = 0;
    check(cudnn().GetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr),
          src + ": the number of configurations");
    std::vector<std::unique_ptr<Desc>> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < n; ++i) {
      cfgs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(cfgs.back()->get());
    }
    int64_t got = 0;
    if (n > 0)
      check(cudnn().GetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, raw.data()),
            src + ": the configurations");
    summary.push_back(src + ": " + std::to_string(got));
    trace(src + ": " + std::to_string(got) + " configurations");
    // The diagnostic counts every source but builds plans only until one is made: each can take seconds.
    const int64_t tries = o.plans_per_source > 0 ? (plan.plan ? 0 : std::min<int64_t>(got, o.plans_per_source)) : got;
    for (int64_t i = 0; i < tries && !done(); ++i) try_plan(std::move(cfgs[static_cast<size_t>(i)]), src + ", configuration " + std::to_string(i));
  }

  // Every engine cuDNN has, by global index, asked whether it takes this graph (as the frontend does
  // for an engine id): the engines heuristics leave out are found here.
  void global_engines(const Desc& graph) {
    int64_t count = 0, got = 0;
    check(cudnn().GetAttribute(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &got, &count),
          "the operation graph's engine count");
    std::map<std::string, int> refused;  // status -> engines
    int supported = 0, plans = 0;
    for (int64_t i = 0; i < count && !done(); ++i) {
      auto engine = std::make_unique<Desc>(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      const std::string src = "engine " + std::to_string(i) + " by index";
      auto cfg = std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      try {
        engine->set_desc(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, &i);
        engine->finalize(src);
        cfg->set_desc(CUDNN_ATTR_ENGINECFG_ENGINE, *engine).finalize("configuration of " + src);
      } catch (const CudnnError& e) {
        const std::string w = e.what();
        const size_t at = w.find(": CUDNN_");
        ++refused[at == std::string::npos ? w : w.substr(at + 2, w.find(')', at) - at - 1)];
        continue;
      }
      ++supported;
      if (o.plans_per_source > 0 && (plans >= o.plans_per_source || plan.plan)) continue;
      ++plans;
      plan.keep.push_back(std::move(engine));
      try_plan(std::move(cfg), src);
    }
    std::string refusals;
    for (const auto& [status, n] : refused) refusals += (refusals.empty() ? "" : ", ") + std::to_string(n) + " " + status;
    const std::string taking = "engines taking the graph: " + std::to_string(supported) + " of " + std::to_string(count);
    summary.push_back(taking + (supported == 0 && !refusals.empty() ? " (" + refusals + ")" : ""));
    trace(taking + (refusals.empty() ? "" : "; the others refuse: " + refusals));
  }
};

}  // namespace

const char* form_name(Form f) {
  switch (f) {
    case Form::unified: return "unified SDPA operation";
    case Form::composite: return "composite graph";
    default: return "automatic";
  }
}

std::vector<Form> forms_for(const fp_problem_v1& p, Form asked) {
  if (asked != Form::automatic) return {asked};
  // The frontend's choice: the unified operation where it takes the problem (9.13.1+, no mask before
  // 9.21), else the composite graph; here the composite graph is also the unified one's fallback.
  if (p.causal == FP_CAUSAL_NONE && cudnn().version >= 91301) return {Form::unified, Form::composite};
  return {Form::composite};
}

std::unique_ptr<Plan> build(const fp_problem_v1& p, const BuildOptions& o) {
  std::string why;
  for (const Form form : forms_for(p, o.form)) {
    trace(std::string("-- ") + form_name(form));
    auto plan = std::make_unique<Plan>();
    Builder g{*plan, {}, 100};
    std::vector<std::string> summary;
    try {
      const Desc& graph = form == Form::unified ? unified_graph(g, p) : composite_graph(g, p, o);
      Search s{*plan, o, {}, 0, {}, form_name(form)};
      s.heuristics(graph, CUDNN_HEUR_MODE_A, "A");
      if (!s.done()) s.heuristics(graph, CUDNN_HEUR_MODE_FALLBACK, "FALLBACK");
      if (!s.done()) s.global_engines(graph);
      summary = s.summary;
      if (s.plan_failures)
        summary.push_back(std::to_string(s.plan_failures) + " plans failed to finalize, the first with " + s.first_plan_failure);
    } catch (const CudnnError& e) {  // a descriptor of the graph did not finalize: the next form may
      summary = {e.what()};
    }
    if (plan->plan) {
      trace("plan: " + plan->source);
      return plan;
    }
    if (!why.empty()) why += "; ";
    why += form_name(form);
    why += ": ";
    for (size_t i = 0; i < summary.size(); ++i) {
      if (i) why += ", ";
      why += summary[i];
    }
  }
  throw CudnnError("cuDNN " + std::to_string(cudnn().version) + " has no engine for this graph: " + why);
}

std::string refusal(const fp_problem_v1& p) {
  if (p.dtype != FP_DTYPE_F16 && p.dtype != FP_DTYPE_BF16) return "dtype: cuDNN's fused attention takes f16 and bf16";
  if (p.out_dtype != p.dtype) return "out_dtype: cuDNN writes O in the input type";
  if (p.window_left >= 0 || p.window_right >= 0) return "window: not expressed by this plug-in's cuDNN graph";
  if (p.softcap != 0) return "softcap: not expressed by this plug-in's cuDNN graph";
  if (p.alibi_slopes) return "alibi_slopes: not expressed by this plug-in's cuDNN graph";
  if (p.seqlens_k) return "seqlens_k: not expressed by this plug-in's cuDNN graph (cuDNN's padding mask is not wired)";
  if (p.sq < 1 || p.sk < 1 || p.batch < 1) return "sq, sk, batch: cuDNN needs at least one query, key and batch element";
  if (p.hkv < 1 || p.hq % p.hkv) return "hkv=" + std::to_string(p.hkv) + ": cuDNN needs hq a multiple of hkv";
  if (p.causal == FP_CAUSAL_BOTTOM_RIGHT && p.sq > p.sk)
    return "causal bottom-right with sq=" + std::to_string(p.sq) + " > sk=" + std::to_string(p.sk) +
           ": cuDNN's SDPA takes bottom-right causal only with sq <= sk (without its padding mask)";
  if (p.d > 256 || p.dv > 256 || p.d % 8 || p.dv % 8)
    return "d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": cuDNN's fused attention takes multiples of 8 up to 256";
  const char* names[] = {"q_strides", "k_strides", "v_strides", "o_strides"};
  const int64_t* all[] = {p.q_strides, p.k_strides, p.v_strides, p.o_strides};
  for (int t = 0; t < 4; ++t) {
    if (all[t][3] != 1) return std::string(names[t]) + ": cuDNN needs the head dimension contiguous (stride 1)";
    for (int i = 0; i < 3; ++i)
      if (all[t][i] % 8) return std::string(names[t]) + ": cuDNN needs strides that are multiples of 8 elements (16 bytes)";
  }
  return "";
}

// The mask value cuDNN's engine expects: -inf, the lowest finite float before 9.10 (as the frontend).
float mask_value() {
  return cudnn().version < 91000 ? std::numeric_limits<float>::lowest() : -std::numeric_limits<float>::infinity();
}

}  // namespace fp_cudnn
