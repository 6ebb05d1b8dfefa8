// A subject for `flashprobe gate`: cuDNN's fused attention (flash SDPA forward) behind the plug-in ABI,
// driven through cuDNN's C backend graph API - a vendor kernel through the gate in C++.
//
// cuDNN is loaded at run time (dlopen), so this library builds wherever the headers are and loads
// wherever flashprobe runs; FLASHPROBE_CUDNN_LIB names the library (default libcudnn.so.9 through
// the loader's search path; PyTorch's wheel ships it as site-packages/nvidia/cudnn/lib/libcudnn.so.9,
// whose folder must then be on LD_LIBRARY_PATH for cuDNN's own sub-libraries). Without it every
// problem is refused with "cuDNN not found: <what was tried>".
//
// The graph is the fused-attention pattern cuDNN's runtime fusion engine matches (documented in
// cuDNN's Graph API guide): S = Q·Kᵀ, S *= scale, the causal mask as GEN_INDEX/compare/BINARY_SELECT,
// softmax as max / sub / exp / sum / log + add (the LSE, natural log) / div, O = P·V; f32 inside.
// supports() builds and finalizes the execution plan (cached per problem shape), so a problem cuDNN
// has no engine for is refused with cuDNN's own message. Features flashprobe has and this graph does
// not express (windows, soft-cap, ALiBi, per-batch key lengths, f32, O in another type) are refused
// naming the field.
#include <cudnn_graph.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "flashprobe/plugin/flashprobe_plugin.h"

namespace {

// ---- cuDNN, loaded at run time --------------------------------------------------------------------
struct Cudnn {
  std::string error;  // why cuDNN cannot be used ("" when it can)
  size_t version = 0;
  cudnnHandle_t handle = nullptr;
  decltype(&cudnnGetVersion) GetVersion = nullptr;
  decltype(&cudnnGetErrorString) GetErrorString = nullptr;
  decltype(&cudnnGetLastErrorString) GetLastErrorString = nullptr;
  decltype(&cudnnCreate) Create = nullptr;
  decltype(&cudnnSetStream) SetStream = nullptr;
  decltype(&cudnnBackendCreateDescriptor) CreateDescriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) DestroyDescriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) SetAttribute = nullptr;
  decltype(&cudnnBackendGetAttribute) GetAttribute = nullptr;
  decltype(&cudnnBackendFinalize) Finalize = nullptr;
  decltype(&cudnnBackendExecute) Execute = nullptr;
};

Cudnn& cudnn() {
  static Cudnn c = [] {
    Cudnn r;
    const char* env = std::getenv("FLASHPROBE_CUDNN_LIB");
    const std::string path = env && *env ? env : "libcudnn.so.9";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      r.error = "cuDNN not found: dlopen(\"" + path + "\") failed: " + (e ? e : "?") +
                " (set FLASHPROBE_CUDNN_LIB to libcudnn.so.9's path)";
      return r;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn && ok) {
        ok = false;
        r.error = "cuDNN at " + path + " lacks " + name;
      }
    };
    sym(r.GetVersion, "cudnnGetVersion");
    sym(r.GetErrorString, "cudnnGetErrorString");
    sym(r.GetLastErrorString, "cudnnGetLastErrorString");
    sym(r.Create, "cudnnCreate");
    sym(r.SetStream, "cudnnSetStream");
    sym(r.CreateDescriptor, "cudnnBackendCreateDescriptor");
    sym(r.DestroyDescriptor, "cudnnBackendDestroyDescriptor");
    sym(r.SetAttribute, "cudnnBackendSetAttribute");
    sym(r.GetAttribute, "cudnnBackendGetAttribute");
    sym(r.Finalize, "cudnnBackendFinalize");
    sym(r.Execute, "cudnnBackendExecute");
    if (!ok) return r;
    r.version = r.GetVersion();
    if (r.version < 90000) {
      r.error = "cuDNN " + std::to_string(r.version) + " at " + path + ": this plug-in needs cuDNN 9";
      return r;
    }
    if (const cudnnStatus_t s = r.Create(&r.handle); s != CUDNN_STATUS_SUCCESS) {
      r.error = std::string("cuDNN ") + std::to_string(r.version) + " at " + path + ": cudnnCreate: " + r.GetErrorString(s);
      r.handle = nullptr;
    }
    return r;
  }();
  return c;
}

struct CudnnError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  char last[512] = "";
  cudnn().GetLastErrorString(last, sizeof last);
  throw CudnnError(std::string(what) + ": " + cudnn().GetErrorString(s) + (last[0] ? std::string(" (") + last + ")" : ""));
}

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t t) { check(cudnn().CreateDescriptor(t, &d_), "cudnnBackendCreateDescriptor"); }
  ~Desc() {
    if (d_) cudnn().DestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  template <class T>
  Desc& set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const T* v, int64_t n = 1) {
    check(cudnn().SetAttribute(d_, a, t, n, v), "cudnnBackendSetAttribute");
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t a, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    return set(a, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o);
  }
  Desc& finalize(const char* what) {
    check(cudnn().Finalize(d_), what);
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// ---- the graph -------------------------------------------------------------------------------------
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kNegInf, kSk, kSq };

struct Graph {
  std::vector<std::unique_ptr<Desc>> keep;  // every descriptor the plan refers to
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
  int64_t next_virtual = 100;

  Desc& make(cudnnBackendDescriptorType_t t) {
    keep.push_back(std::make_unique<Desc>(t));
    return *keep.back();
  }
  // A tensor of the graph: dims and strides [b, h, s, x]; virtual ones get their own ids.
  Desc& tensor(cudnnDataType_t type, std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t uid = 0,
               bool by_value = false) {
    Desc& t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const bool is_virtual = uid == 0;
    if (is_virtual) uid = next_virtual++;
    const int64_t align = 16;
    const int64_t n = static_cast<int64_t>(dims.size());
    const bool virt = is_virtual;
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), n)
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), n)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &virt);
    if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &by_value);
    return t.finalize("tensor descriptor");
  }
  Desc& scalar(cudnnDataType_t type, int64_t uid) {
    return tensor(type, {1, 1, 1, 1}, {1, 1, 1, 1}, uid, true);
  }
  // y = mode(x[, b][, t]) with math precision `prec` (and an axis for GEN_INDEX and index arithmetic).
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t prec, const Desc& x, const Desc* b, const Desc* t,
                 const Desc& y, int64_t axis = -1) {
    Desc& pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode).set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec);
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    pw.finalize("pointwise descriptor");
    Desc& op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw).set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize("pointwise operation");
    ops.push_back(&op);
  }
  void reduction(cudnnReduceTensorOp_t mode, const Desc& x, const Desc& y) {
    Desc& r = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t f = CUDNN_DATA_FLOAT;
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f)
        .finalize("reduction descriptor");
    Desc& op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x).set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r).finalize("reduction operation");
    ops.push_back(&op);
  }
  void matmul(const Desc& a, const Desc& b, const Desc& c) {
    Desc& m = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f = CUDNN_DATA_FLOAT;
    m.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f).finalize("matmul descriptor");
    Desc& op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a).set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c).set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .finalize("matmul operation");
    ops.push_back(&op);
  }
  std::vector<Desc*> ops;
};

// [b, s, h, x] element strides (the ABI's order) as cuDNN's [b, h, s, x].
std::vector<int64_t> bhsd(const int64_t* st) { return {st[0], st[2], st[1], st[3]}; }

std::unique_ptr<Graph> build(const fp_problem_v1& p) {
  auto g = std::make_unique<Graph>();
  const cudnnDataType_t io = p.dtype == FP_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF, f = CUDNN_DATA_FLOAT;
  const int64_t b = p.batch, hq = p.hq, hk = p.hkv, sq = p.sq, sk = p.sk, d = p.d, dv = p.dv;
  Desc& q = g->tensor(io, {b, hq, sq, d}, bhsd(p.q_strides), kQ);
  // Kᵀ: [b, hkv, d, sk], the transpose by strides.
  Desc& kt = g->tensor(io, {b, hk, d, sk}, {p.k_strides[0], p.k_strides[2], p.k_strides[3], p.k_strides[1]}, kK);
  Desc& v = g->tensor(io, {b, hk, sk, dv}, bhsd(p.v_strides), kV);
  Desc& o = g->tensor(io, {b, hq, sq, dv}, bhsd(p.o_strides), kO);
  const std::vector<int64_t> row_dims{b, hq, sq, 1}, row_strides{hq * sq, sq, 1, 1};
  const std::vector<int64_t> s_dims{b, hq, sq, sk}, s_strides{hq * sq * sk, sq * sk, sk, 1};
  Desc& stats = g->tensor(f, row_dims, row_strides, kStats);
  Desc& scale = g->scalar(f, kScale);

  Desc& s = g->tensor(f, s_dims, s_strides);
  g->matmul(q, kt, s);
  Desc* last = &g->tensor(f, s_dims, s_strides);
  g->pointwise(CUDNN_POINTWISE_MUL, f, s, &scale, nullptr, *last);
  if (p.causal != FP_CAUSAL_NONE) {
    // Key j stays visible when row + (sk - sq for bottom-right) >= j; the others become -inf.
    Desc& row0 = g->tensor(CUDNN_DATA_INT32, s_dims, s_strides);
    Desc& col = g->tensor(CUDNN_DATA_INT32, s_dims, s_strides);
    g->pointwise(CUDNN_POINTWISE_GEN_INDEX, f, *last, nullptr, nullptr, row0, 2);
    g->pointwise(CUDNN_POINTWISE_GEN_INDEX, f, *last, nullptr, nullptr, col, 3);
    Desc* row = &row0;
    if (p.causal == FP_CAUSAL_BOTTOM_RIGHT) {
      Desc& plus = g->tensor(CUDNN_DATA_INT32, s_dims, s_strides);
      g->pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, *row, &g->scalar(CUDNN_DATA_INT32, kSk), nullptr, plus, 3);
      Desc& minus = g->tensor(CUDNN_DATA_INT32, s_dims, s_strides);
      g->pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, plus, &g->scalar(CUDNN_DATA_INT32, kSq), nullptr, minus, 3);
      row = &minus;
    }
    Desc& keep = g->tensor(CUDNN_DATA_BOOLEAN, s_dims, s_strides);
    g->pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *row, &col, nullptr, keep);
    Desc& masked = g->tensor(f, s_dims, s_strides);
    g->pointwise(CUDNN_POINTWISE_BINARY_SELECT, f, *last, &g->scalar(f, kNegInf), &keep, masked);
    last = &masked;
  }
  Desc& mx = g->tensor(f, row_dims, row_strides);
  g->reduction(CUDNN_REDUCE_TENSOR_MAX, *last, mx);
  Desc& sub = g->tensor(f, s_dims, s_strides);
  g->pointwise(CUDNN_POINTWISE_SUB, f, *last, &mx, nullptr, sub);
  Desc& ex = g->tensor(f, s_dims, s_strides);
  g->pointwise(CUDNN_POINTWISE_EXP, f, sub, nullptr, nullptr, ex);
  Desc& sum = g->tensor(f, row_dims, row_strides);
  g->reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
  Desc& lg = g->tensor(f, row_dims, row_strides);
  g->pointwise(CUDNN_POINTWISE_LOG, f, sum, nullptr, nullptr, lg);
  g->pointwise(CUDNN_POINTWISE_ADD, f, mx, &lg, nullptr, stats);
  Desc& pr = g->tensor(f, s_dims, s_strides);
  g->pointwise(CUDNN_POINTWISE_DIV, f, ex, &sum, nullptr, pr);
  g->matmul(pr, v, o);

  cudnnHandle_t h = cudnn().handle;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (Desc* op : g->ops) raw.push_back(op->get());
  Desc& graph = g->make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw.data(), static_cast<int64_t>(raw.size()))
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h)
      .finalize("operation graph");
  // The heuristics' engine configurations, in their order; the first that makes a plan wins.
  std::string why = "no engine configuration";
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
    try {
      heur.finalize("engine heuristics");
    } catch (const CudnnError& e) {
      why = e.what();
      continue;
    }
    int64_t n = 0;
    check(cudnn().GetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr),
          "heuristics result count");
    std::vector<std::unique_ptr<Desc>> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw_cfgs;
    for (int64_t i = 0; i < n; ++i) {
      cfgs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw_cfgs.push_back(cfgs.back()->get());
    }
    if (n > 0)
      check(cudnn().GetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, raw_cfgs.data()),
            "heuristics results");
    for (int64_t i = 0; i < n; ++i) {
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      try {
        plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h)
            .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *cfgs[static_cast<size_t>(i)])
            .finalize("execution plan");
      } catch (const CudnnError& e) {
        why = e.what();
        continue;
      }
      int64_t ws = 0, got = 0;
      check(cudnn().GetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws),
            "workspace size");
      g->plan = std::move(plan);
      g->workspace = ws;
      for (auto& c : cfgs) g->keep.push_back(std::move(c));
      return g;
    }
  }
  throw CudnnError("cuDNN " + std::to_string(cudnn().version) + " has no engine for this graph: " + why);
}

// Plans by problem (shape, strides, dtype, mask; the scale is a by-value input of the plan).
std::mutex g_mutex;
std::map<std::string, std::unique_ptr<Graph>> g_plans;

std::string key_of(const fp_problem_v1& p) {
  std::string k;
  for (int64_t x : {int64_t{p.batch}, int64_t{p.hq}, int64_t{p.hkv}, int64_t{p.sq}, int64_t{p.sk}, int64_t{p.d}, int64_t{p.dv},
                    int64_t{p.dtype}, int64_t{p.causal}})
    k += std::to_string(x) + ",";
  for (const int64_t* s : {p.q_strides, p.k_strides, p.v_strides, p.o_strides})
    for (int i = 0; i < 4; ++i) k += std::to_string(s[i]) + ",";
  return k;
}

Graph& plan_for(const fp_problem_v1& p) {
  const std::string k = key_of(p);
  auto it = g_plans.find(k);
  if (it != g_plans.end()) return *it->second;
  if (g_plans.size() >= 64) g_plans.clear();  // the gate draws thousands of shapes; keep memory bounded
  return *(g_plans[k] = build(p));
}

// What this graph cannot express, naming the field; "" when cuDNN is asked.
std::string refusal(const fp_problem_v1& p) {
  if (p.dtype != FP_DTYPE_F16 && p.dtype != FP_DTYPE_BF16) return "dtype: cuDNN's fused attention takes f16 and bf16";
  if (p.out_dtype != p.dtype) return "out_dtype: cuDNN writes O in the input type";
  if (p.window_left >= 0 || p.window_right >= 0) return "window: not expressed by this plug-in's cuDNN graph";
  if (p.softcap != 0) return "softcap: not expressed by this plug-in's cuDNN graph";
  if (p.alibi_slopes) return "alibi_slopes: not expressed by this plug-in's cuDNN graph";
  if (p.seqlens_k) return "seqlens_k: not expressed by this plug-in's cuDNN graph (cuDNN's padding mask is not wired)";
  if (p.sq < 1 || p.sk < 1 || p.batch < 1) return "sq, sk, batch: cuDNN needs at least one query, key and batch element";
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

int supports(const fp_problem_v1* p, char* why, size_t n) {
  std::string r = refusal(*p);
  if (r.empty()) r = cudnn().error;
  if (r.empty()) {
    std::lock_guard<std::mutex> lock(g_mutex);
    try {
      plan_for(*p);
      return 1;
    } catch (const std::exception& e) {
      r = e.what();
    }
  }
  std::snprintf(why, n, "%s", r.c_str());
  return 0;
}

int launch(const fp_problem_v1* p, const fp_tensors_v1* t, char* err, size_t n) {
  std::lock_guard<std::mutex> lock(g_mutex);
  void* ws = nullptr;
  try {
    if (!cudnn().error.empty()) throw std::runtime_error(cudnn().error);
    Graph& g = plan_for(*p);
    for (const void* ptr : {t->q, t->k, t->v, static_cast<const void*>(t->o)})
      if (reinterpret_cast<uintptr_t>(ptr) % 16) throw std::runtime_error("a tensor is not 16-byte aligned: cuDNN needs it");
    if (g.workspace > 0 && cudaMalloc(&ws, static_cast<size_t>(g.workspace)) != cudaSuccess)
      throw std::runtime_error("workspace of " + std::to_string(g.workspace) + " bytes: cudaMalloc failed");
    float scale = static_cast<float>(p->scale), neg_inf = -std::numeric_limits<float>::infinity();
    int32_t skv = p->sk, sq = p->sq;
    std::vector<int64_t> uids{kQ, kK, kV, kO, kStats, kScale};
    std::vector<void*> ptrs{const_cast<void*>(t->q), const_cast<void*>(t->k), const_cast<void*>(t->v), t->o, t->lse, &scale};
    if (p->causal != FP_CAUSAL_NONE) {
      uids.push_back(kNegInf);
      ptrs.push_back(&neg_inf);
    }
    if (p->causal == FP_CAUSAL_BOTTOM_RIGHT) {
      uids.insert(uids.end(), {kSk, kSq});
      ptrs.insert(ptrs.end(), {&skv, &sq});
    }
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(), static_cast<int64_t>(uids.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs.data(), static_cast<int64_t>(ptrs.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &ws)
        .finalize("variant pack");
    check(cudnn().SetStream(cudnn().handle, static_cast<cudaStream_t>(t->stream)), "cudnnSetStream");
    check(cudnn().Execute(cudnn().handle, g.plan->get(), pack.get()), "cudnnBackendExecute");
    // The by-value scalars and the workspace must outlive the work.
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(t->stream)) != cudaSuccess) throw std::runtime_error("stream synchronize failed");
    if (ws) cudaFree(ws);
    return 0;
  } catch (const std::exception& e) {
    if (ws) cudaFree(ws);
    std::snprintf(err, n, "cudnn: %s", e.what());
    return 1;
  }
}

const fp_plugin_v1 kDescriptor = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_v1), "cudnn-sdpa",
                                  "cuDNN's fused attention (flash SDPA forward) through the backend graph API",
                                  supports, launch};
}  // namespace

extern "C" __attribute__((visibility("default"))) const fp_plugin_v1* flashprobe_plugin_v1(void) {
  return &kDescriptor;
}
