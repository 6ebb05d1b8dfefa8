// A stand-in for libcudnn.so.9 for the cuDNN plug-in's CPU tests (test_cudnn_plugin_fake.cpp): the
// entry points the plug-in loads, with backend descriptors that keep their attributes, and one rule of
// cuDNN's SDPA engine as NVIDIA's cudnn-frontend states it ("Requirement by cudnn backend to take in
// bmm2 aType as i/o type", node/scaled_dot_product_flash_attention.h): an operation graph whose second
// matmul's A (P) is not in the type of the first matmul's A (Q) gets no engine - no heuristics
// configuration, every engine by global index NOT_SUPPORTED_GRAPH_PATTERN - as cuDNN 9.19 answered
// the plug-in's first graph on an H200. The unified form (one SDPA forward operation) is taken when
// its six tensors are set, unless FAKE_CUDNN_NO_UNIFIED is set. FAKE_CUDNN_PLAN_STATUS=<n> makes every execution plan's
// finalize return status n. FAKE_CUDNN_LOG=<file> appends every descriptor call to the file (create,
// set with its values, finalize), to set one program's graph beside another's. FAKE_CUDNN_CRASH=heuristics
// raises SIGSEGV in the heuristics' finalize (a crash inside cuDNN). No GPU is touched;
// cudnnBackendExecute is not supported.
#include <cudnn_graph.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

struct Fake {
  cudnnBackendDescriptorType_t type;
  int id = 0;  // in creation order, for the log
  std::map<int, std::vector<char>> attrs;  // attribute -> raw elements
  std::map<int, int64_t> counts;           // attribute -> element count
  bool finalized = false;
  bool takes_graph = false;  // an operation graph cuDNN's SDPA engine takes / an engine on one
};

std::string g_last;
int g_next_id = 1;

// The log (FAKE_CUDNN_LOG, read at every call, so that a test can point it at a file of its own).
FILE* log_file() {
  static FILE* f = nullptr;
  static std::string open_path;
  const char* p = std::getenv("FAKE_CUDNN_LOG");
  const std::string path = p ? p : "";
  if (path != open_path) {
    if (f) std::fclose(f);
    f = path.empty() ? nullptr : std::fopen(path.c_str(), "a");
    if (f) std::setvbuf(f, nullptr, _IONBF, 0);  // every line in the file at once
    open_path = path;
  }
  return f;
}

size_t element_size(cudnnBackendAttributeType_t t) {
  switch (t) {
    case CUDNN_TYPE_INT64: return 8;
    case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_FLOAT: return 4;
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void*);
    case CUDNN_TYPE_HANDLE: return sizeof(void*);
    case CUDNN_TYPE_VOID_PTR: return sizeof(void*);
    default: return 4;  // the enums: data type, modes, operators
  }
}

Fake* fake(cudnnBackendDescriptor_t d) { return reinterpret_cast<Fake*>(d); }

template <class T>
T first(const Fake* f, int attr) {
  const auto it = f->attrs.find(attr);
  T v{};
  if (it != f->attrs.end() && it->second.size() >= sizeof(T)) std::memcpy(&v, it->second.data(), sizeof(T));
  return v;
}

// The data type of the tensor set as `attr` of operation `op`.
int tensor_type(const Fake* op, int attr) {
  const Fake* t = first<Fake*>(op, attr);
  return t ? first<int>(t, CUDNN_ATTR_TENSOR_DATA_TYPE) : -1;
}

// The rule above, over the graph's operations in order.
bool sdpa_engine_takes(const Fake* graph) {
  const auto it = graph->attrs.find(CUDNN_ATTR_OPERATIONGRAPH_OPS);
  if (it == graph->attrs.end()) return false;
  std::vector<Fake*> ops(it->second.size() / sizeof(Fake*));
  std::memcpy(ops.data(), it->second.data(), it->second.size());
  // The unified form: one SDPA forward operation with its six tensors (refused under FAKE_CUDNN_NO_UNIFIED).
  if (ops.size() == 1 && ops[0]->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) {
    const char* no = std::getenv("FAKE_CUDNN_NO_UNIFIED");
    if (no && *no) return false;
    for (int a = CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC; a <= CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC; ++a)
      if (!first<Fake*>(ops[0], a)) return false;
    return true;
  }
  std::vector<const Fake*> matmuls;
  for (const Fake* op : ops)
    if (op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) matmuls.push_back(op);
  if (matmuls.size() != 2) return false;
  return tensor_type(matmuls[1], CUDNN_ATTR_OPERATION_MATMUL_ADESC) == tensor_type(matmuls[0], CUDNN_ATTR_OPERATION_MATMUL_ADESC);
}

cudnnStatus_t fail(cudnnStatus_t s, const std::string& why) {
  g_last = "fake cuDNN: " + why;
  return s;
}

cudnnStatus_t finalize(Fake* f) {
  switch (f->type) {
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: f->takes_graph = sdpa_engine_takes(f); break;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: {
      const Fake* g = first<Fake*>(f, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
      if (!g || !g->takes_graph) return fail(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN, "no such fusion pattern");
      f->takes_graph = true;
      break;
    }
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
      if (const char* e = std::getenv("FAKE_CUDNN_PLAN_STATUS"); e && *e)
        return fail(static_cast<cudnnStatus_t>(std::atoi(e)), "plan refused");
      break;
    default: break;
  }
  f->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

size_t cudnnGetVersion(void) { return 91900; }
size_t cudnnGetCudartVersion(void) { return 13000; }

const char* cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN: return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
    default: return "CUDNN_STATUS_OTHER";
  }
}

void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (max_size == 0) return;
  std::strncpy(message, g_last.c_str(), max_size - 1);
  message[max_size - 1] = '\0';
  g_last.clear();
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* h) {
  static int handle;
  *h = reinterpret_cast<cudnnHandle_t>(&handle);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t* d) {
  Fake* f = new Fake{t, g_next_id++, {}, {}};
  if (FILE* l = log_file()) std::fprintf(l, "create %d type %d\n", f->id, static_cast<int>(t));
  *d = reinterpret_cast<cudnnBackendDescriptor_t>(f);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  delete fake(d);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
                                       int64_t n, const void* v) {
  Fake* f = fake(d);
  if (f->finalized) return fail(CUDNN_STATUS_BAD_PARAM, "set on a finalized descriptor");
  const auto* p = static_cast<const char*>(v);
  f->attrs[a].assign(p, p + static_cast<size_t>(n) * element_size(t));
  f->counts[a] = n;
  if (FILE* l = log_file()) {
    std::fprintf(l, "set %d attr %d type %d:", f->id, static_cast<int>(a), static_cast<int>(t));
    for (int64_t i = 0; i < n; ++i) {
      const char* e = p + static_cast<size_t>(i) * element_size(t);
      if (t == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        Fake* o = nullptr;
        std::memcpy(&o, e, sizeof o);
        std::fprintf(l, " d%d", o ? o->id : 0);
      } else if (t == CUDNN_TYPE_INT64) {
        int64_t x;
        std::memcpy(&x, e, sizeof x);
        std::fprintf(l, " %lld", static_cast<long long>(x));
      } else if (t == CUDNN_TYPE_BOOLEAN) {
        std::fprintf(l, " %d", *reinterpret_cast<const bool*>(e) ? 1 : 0);
      } else if (t == CUDNN_TYPE_FLOAT) {
        float x;
        std::memcpy(&x, e, sizeof x);
        std::fprintf(l, " %g", static_cast<double>(x));
      } else if (t == CUDNN_TYPE_DOUBLE) {
        double x;
        std::memcpy(&x, e, sizeof x);
        std::fprintf(l, " %g", x);
      } else if (t == CUDNN_TYPE_HANDLE || t == CUDNN_TYPE_VOID_PTR) {
        std::fprintf(l, " ptr");
      } else {
        int x;
        std::memcpy(&x, e, sizeof x);
        std::fprintf(l, " %d", x);
      }
    }
    std::fprintf(l, "\n");
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d) {
  // FAKE_CUDNN_CRASH=heuristics: a segmentation fault in the heuristics' finalize, as a real cuDNN's
  // crash inside a call (the diagnostic script must say so loudly, with the step it had reached).
  if (const char* c = std::getenv("FAKE_CUDNN_CRASH"); c && std::strcmp(c, "heuristics") == 0 &&
                                                         fake(d)->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    std::raise(SIGSEGV);
  const cudnnStatus_t s = finalize(fake(d));
  if (FILE* l = log_file()) std::fprintf(l, "finalize %d status %d\n", fake(d)->id, static_cast<int>(s));
  return s;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t,
                                       int64_t requested, int64_t* n, void* out) {
  const Fake* f = fake(d);
  switch (a) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
      const Fake* g = first<Fake*>(f, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
      const int64_t have = g && g->takes_graph ? 1 : 0;
      *n = requested == 0 ? have : std::min(have, requested);
      return CUDNN_STATUS_SUCCESS;  // the configurations the caller created stand for the engine's
    }
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
      *n = 1;
      *static_cast<int64_t*>(out) = 2;
      return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
      *n = 1;
      *static_cast<int64_t*>(out) = 0;
      return CUDNN_STATUS_SUCCESS;
    default: return fail(CUDNN_STATUS_NOT_SUPPORTED, "attribute " + std::to_string(static_cast<int>(a)) + " not faked");
  }
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t) {
  return fail(CUDNN_STATUS_NOT_SUPPORTED, "no GPU behind this stand-in");
}

}  // extern "C"
