// A subject for `flashprobe gate`: cuDNN's fused attention (flash SDPA forward) behind the plug-in ABI,
// driven through cuDNN's C backend graph API - a vendor kernel through the gate in C++.
//
// cuDNN is loaded at run time (dlopen), so this library builds wherever the headers are and loads
// wherever flashprobe runs; FLASHPROBE_CUDNN_LIB names the library (default libcudnn.so.9 through
// the loader's search path; PyTorch's wheel ships it as site-packages/nvidia/cudnn/lib/libcudnn.so.9,
// whose folder must then be on LD_LIBRARY_PATH for cuDNN's own sub-libraries). Without it every
// problem is refused with "cuDNN not found: <what was tried>".
//
// The graph and its plan are cudnn_sdpa_graph.cpp's. supports() builds the plan (cached per problem
// shape, as is a refusal), so a problem cuDNN has no engine for is refused with what each source of
// engines gave and cuDNN's status. Features flashprobe has and the graph does not express (windows,
// soft-cap, ALiBi, per-batch key lengths, f32, O in another type) are refused naming the field, as
// are the problems cuDNN's SDPA does not take (bottom-right causal with sq > sk).
#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudnn_sdpa_graph.h"
#include "flashprobe/plugin/flashprobe_plugin.h"

namespace {

using fp_cudnn::cudnn;
using fp_cudnn::Desc;
using fp_cudnn::Plan;

// Plans by problem (shape, strides, dtype, mask; the scale is a by-value input of the plan), and the
// problems cuDNN made no plan for, with its reason: the gate asks about thousands of shapes, often
// the same one again.
std::mutex g_mutex;
std::map<std::string, std::unique_ptr<Plan>> g_plans;
std::map<std::string, std::string> g_no_plan;

std::string key_of(const fp_problem_v1& p) {
  std::string k;
  for (int64_t x : {int64_t{p.batch}, int64_t{p.hq}, int64_t{p.hkv}, int64_t{p.sq}, int64_t{p.sk}, int64_t{p.d}, int64_t{p.dv},
                    int64_t{p.dtype}, int64_t{p.causal}})
    k += std::to_string(x) + ",";
  for (const int64_t* s : {p.q_strides, p.k_strides, p.v_strides, p.o_strides})
    for (int i = 0; i < 4; ++i) k += std::to_string(s[i]) + ",";
  return k;
}

Plan& plan_for(const fp_problem_v1& p) {
  const std::string k = key_of(p);
  if (auto it = g_plans.find(k); it != g_plans.end()) return *it->second;
  if (auto it = g_no_plan.find(k); it != g_no_plan.end()) throw fp_cudnn::CudnnError(it->second);
  if (g_plans.size() >= 64) g_plans.clear();  // keep memory bounded
  if (g_no_plan.size() >= 4096) g_no_plan.clear();
  try {
    return *(g_plans[k] = fp_cudnn::build(p));
  } catch (const fp_cudnn::CudnnError& e) {
    g_no_plan[k] = e.what();
    throw;
  }
}

int supports(const fp_problem_v1* p, char* why, size_t n) {
  std::string r = fp_cudnn::refusal(*p);
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
    Plan& g = plan_for(*p);
    for (const void* ptr : {t->q, t->k, t->v, static_cast<const void*>(t->o)})
      if (reinterpret_cast<uintptr_t>(ptr) % 16) throw std::runtime_error("a tensor is not 16-byte aligned: cuDNN needs it");
    if (g.workspace > 0 && cudaMalloc(&ws, static_cast<size_t>(g.workspace)) != cudaSuccess)
      throw std::runtime_error("workspace of " + std::to_string(g.workspace) + " bytes: cudaMalloc failed");
    using namespace fp_cudnn;
    float scale = static_cast<float>(p->scale), masked = mask_value();
    int32_t skv = p->sk, sq = p->sq;
    std::vector<int64_t> uids{kQ, kK, kV, kO, kStats, kScale};
    std::vector<void*> ptrs{const_cast<void*>(t->q), const_cast<void*>(t->k), const_cast<void*>(t->v), t->o, t->lse, &scale};
    if (p->causal != FP_CAUSAL_NONE) {
      uids.push_back(kMaskValue);
      ptrs.push_back(&masked);
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
    check(cudnn().Execute(cudnn().handle, g.plan->get(), pack.get()), "cudnnBackendExecute (plan from " + g.source + ")");
    // The by-value scalars and the workspace must outlive the work.
    if (const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(t->stream)); e != cudaSuccess)
      throw std::runtime_error(std::string("stream synchronize after cudnnBackendExecute: ") + cudaGetErrorName(e));
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
