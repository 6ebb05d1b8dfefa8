// The cuDNN the cuDNN plug-in subject uses (cudnn_sdpa_plugin.cpp): its entry points, loaded at run
// time with dlopen from FLASHPROBE_CUDNN_LIB (default libcudnn.so.9), so that the plug-in builds
// wherever cuDNN 9's headers are; its statuses by name; its backend descriptors owned and finalized
// with the step named in any error; and a per-thread trace of those steps for the diagnostic.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp_cudnn {

// The entry points this code calls, from the library FLASHPROBE_CUDNN_LIB (default libcudnn.so.9).
struct Cudnn {
  std::string error;  // why cuDNN cannot be used ("" when it can)
  std::string path;   // what was opened
  size_t version = 0;
  cudnnHandle_t handle = nullptr;
  decltype(&cudnnGetVersion) GetVersion = nullptr;
  decltype(&cudnnGetCudartVersion) GetCudartVersion = nullptr;
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
Cudnn& cudnn();  // opened once, at the first call

struct CudnnError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN (3001)": cuDNN's name for a status and its number.
std::string status_name(cudnnStatus_t s);
// Throws CudnnError "<step>: <status name> (<cuDNN's last error message>)" unless s is success; with
// a trace active (TraceScope) every call also appends "<step>: <status name>" to it.
void check(cudnnStatus_t s, const std::string& step);

// The steps of one build, as lines, while a TraceScope is alive on this thread; with `echo`, each line
// is also written there ("  <line>") and flushed as it happens, so that a crash inside cuDNN leaves
// the last step it reached on the page (the diagnostic).
using Trace = std::vector<std::string>;
class TraceScope {
 public:
  explicit TraceScope(Trace* t, std::FILE* echo = nullptr);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Trace* prev_;
  std::FILE* prev_echo_;
};
void trace(const std::string& line);  // appends when a trace is active
// cuDNN's message for its last failure, cut to 200 characters (the plug-in ABI's reasons are 512).
std::string last_error();

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t t);
  ~Desc();
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  template <class T>
  Desc& set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const T* v, int64_t n = 1) {
    check(cudnn().SetAttribute(d_, a, t, n, v), "cudnnBackendSetAttribute " + std::to_string(static_cast<int>(a)));
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t a, const Desc& other);
  Desc& finalize(const std::string& step);

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

}  // namespace fp_cudnn
