// The cuDNN entry points the plug-in uses, loaded at run time, and its backend descriptors
// (cudnn_backend.h).
#include "cudnn_backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

namespace fp_cudnn {

Cudnn& cudnn() {
  static Cudnn c = [] {
    Cudnn r;
    const char* env = std::getenv("FLASHPROBE_CUDNN_LIB");
    r.path = env && *env ? env : "libcudnn.so.9";
    void* h = dlopen(r.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      r.error = "cuDNN not found: dlopen(\"" + r.path + "\") failed: " + (e ? e : "?") +
                " (set FLASHPROBE_CUDNN_LIB to libcudnn.so.9's path)";
      return r;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn && ok) {
        ok = false;
        r.error = "cuDNN at " + r.path + " lacks " + name;
      }
    };
    sym(r.GetVersion, "cudnnGetVersion");
    sym(r.GetCudartVersion, "cudnnGetCudartVersion");
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
      r.error = "cuDNN " + std::to_string(r.version) + " at " + r.path + ": this plug-in needs cuDNN 9";
      return r;
    }
    if (const cudnnStatus_t s = r.Create(&r.handle); s != CUDNN_STATUS_SUCCESS) {
      r.error = "cuDNN " + std::to_string(r.version) + " at " + r.path + ": cudnnCreate: " + r.GetErrorString(s) + " (" +
                std::to_string(static_cast<int>(s)) + ")";
      r.handle = nullptr;
    }
    return r;
  }();
  return c;
}

std::string status_name(cudnnStatus_t s) {
  const char* n = cudnn().GetErrorString ? cudnn().GetErrorString(s) : nullptr;
  return std::string(n ? n : "status") + " (" + std::to_string(static_cast<int>(s)) + ")";
}

namespace {
thread_local Trace* g_trace = nullptr;
thread_local std::FILE* g_echo = nullptr;
}  // namespace

std::string last_error() {
  char last[201] = "";
  cudnn().GetLastErrorString(last, sizeof last);
  return last;
}

TraceScope::TraceScope(Trace* t, std::FILE* echo) : prev_(g_trace), prev_echo_(g_echo) {
  g_trace = t;
  g_echo = echo;
}
TraceScope::~TraceScope() {
  g_trace = prev_;
  g_echo = prev_echo_;
}
void trace(const std::string& line) {
  if (!g_trace) return;
  g_trace->push_back(line);
  if (g_echo) {
    std::fprintf(g_echo, "  %s\n", line.c_str());
    std::fflush(g_echo);
  }
}

void check(cudnnStatus_t s, const std::string& step) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const std::string last = last_error();
  const std::string msg = step + ": " + status_name(s) + (last.empty() ? "" : " (" + last + ")");
  trace(msg);
  throw CudnnError(msg);
}

Desc::Desc(cudnnBackendDescriptorType_t t) {
  check(cudnn().CreateDescriptor(t, &d_), "cudnnBackendCreateDescriptor " + std::to_string(static_cast<int>(t)));
}
Desc::~Desc() {
  if (d_) cudnn().DestroyDescriptor(d_);
}
Desc& Desc::set_desc(cudnnBackendAttributeName_t a, const Desc& other) {
  cudnnBackendDescriptor_t o = other.get();
  return set(a, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o);
}
Desc& Desc::finalize(const std::string& step) {
  check(cudnn().Finalize(d_), "finalize " + step);
  trace("finalize " + step + ": " + status_name(CUDNN_STATUS_SUCCESS));
  return *this;
}

}  // namespace fp_cudnn
