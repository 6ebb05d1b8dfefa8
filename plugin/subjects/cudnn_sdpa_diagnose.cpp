// The cuDNN plug-in's diagnostic, exported beside the plug-in ABI (cudnn_sdpa_diagnose.h;
// scripts/gpu/cudnn_diagnose.py calls it; run-all's cudnn-diagnose stage runs that on a GPU):
//
//     int fp_cudnn_sdpa_diagnose(void);
//
// prints to stdout the CUDA context it made (the gate's process has one before cuDNN is opened; a
// Python process has none), which cuDNN was loaded (its file, version, the CUDA runtime it was built
// for, which of its sub-libraries and NVRTC are loaded or load), then for a handful of fixed problems
// (d 64/128, d != dv, causal none / top-left / bottom-right, f16/bf16, GQA, one query, a shape next to
// the first) every step of the graph's build with cuDNN's status as it happens (flushed line by line,
// so that a crash inside cuDNN leaves the step it reached), each plan's finalize timed, the
// configurations heuristics mode A and FALLBACK give, the engines (by global index) that take the
// graph and the plan made (the unified SDPA operation first where it applies, then the composite
// graph); last the first problem in the composite form, with P in f16 and in f32 (the graph this
// plug-in had first). Returns how many of the fixed problems got no plan (0 is the expectation), -1
// when cuDNN did not load.
//
// A cuDNN sub-library is never unloaded here: the first version of this file dlopen()ed and dlclose()d
// libcudnn_engines_*.so and libcudnn_heuristic.so to say whether they load, before cuDNN had loaded
// them itself; unloading a library cuDNN's engine registry may point into is the likeliest cause of
// the diagnostic's segmentation fault on an H100 (2026-11-26) right after the first problem's header,
// where the gate, which never does that, held with the same cuDNN (inferred from reading; not yet run
// on a GPU with the fix). Libraries already loaded are reported from the loader (RTLD_NOLOAD); the
// others are loaded to stay (RTLD_NODELETE).
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cudnn_sdpa_diagnose.h"
#include "cudnn_sdpa_graph.h"

namespace {

using namespace fp_cudnn;

struct Fixed {
  const char* what;
  fp_problem_v1 p;
};

fp_problem_v1 problem(int32_t b, int32_t hq, int32_t hkv, int32_t sq, int32_t sk, int32_t d, int32_t dv, fp_dtype_v1 t,
                      fp_causal_v1 causal) {
  fp_problem_v1 p{};
  p.batch = b, p.hq = hq, p.hkv = hkv, p.sq = sq, p.sk = sk, p.d = d, p.dv = dv, p.dtype = p.out_dtype = t;
  // Contiguous [b, s, h, x].
  auto bshd = [](int64_t* st, int64_t s, int64_t h, int64_t x) {
    st[0] = s * h * x, st[1] = h * x, st[2] = x, st[3] = 1;
  };
  bshd(p.q_strides, sq, hq, d);
  bshd(p.k_strides, sk, hkv, d);
  bshd(p.v_strides, sk, hkv, dv);
  bshd(p.o_strides, sq, hq, dv);
  p.scale = 1.0 / 8;
  p.causal = causal;
  p.window_left = p.window_right = -1;
  return p;
}

std::vector<Fixed> fixed_problems() {
  return {
      {"f16 d=64, no mask", problem(2, 4, 4, 128, 128, 64, 64, FP_DTYPE_F16, FP_CAUSAL_NONE)},
      // A nearby shape: its plan's time says whether cuDNN compiles again for each shape.
      {"f16 d=64, no mask, sq and sk 136", problem(2, 4, 4, 136, 136, 64, 64, FP_DTYPE_F16, FP_CAUSAL_NONE)},
      {"f16 d=128, causal top-left", problem(1, 2, 2, 256, 256, 128, 128, FP_DTYPE_F16, FP_CAUSAL_TOP_LEFT)},
      {"bf16 d=64, causal bottom-right, sq < sk", problem(2, 2, 2, 64, 192, 64, 64, FP_DTYPE_BF16, FP_CAUSAL_BOTTOM_RIGHT)},
      {"bf16 d=128, GQA 8/2, odd lengths", problem(1, 8, 2, 100, 300, 128, 128, FP_DTYPE_BF16, FP_CAUSAL_NONE)},
      {"f16 d=64, GQA 4/1, causal top-left, one query", problem(3, 4, 1, 1, 77, 64, 64, FP_DTYPE_F16, FP_CAUSAL_TOP_LEFT)},
      {"f16 d=128, dv=64", problem(1, 2, 2, 96, 160, 128, 64, FP_DTYPE_F16, FP_CAUSAL_NONE)},
  };
}

// Whether `name` is loaded or loads (through the loader's search path), and from where. Never
// unloaded: RTLD_NODELETE keeps a library this call loads (see the top of this file).
void library(const char* name) {
  void* h = dlopen(name, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  const bool was_loaded = h != nullptr;
  if (!h) h = dlopen(name, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) {
    const char* e = dlerror();
    std::printf("  %-40s does not load: %s\n", name, e ? e : "?");
    std::fflush(stdout);
    return;
  }
  link_map* map = nullptr;
  const bool where = dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name;
  std::printf("  %-40s %s%s%s\n", name, was_loaded ? "loaded" : "loads", where ? " from " : "", where ? map->l_name : "");
  std::fflush(stdout);
  dlclose(h);  // a reference count only: NOLOAD's was cuDNN's library, NODELETE's stays mapped
}

// One problem: its refusal or its build, step by step.
bool diagnose(const char* what, const fp_problem_v1& p, const BuildOptions& o) {
  std::printf("\n== %s: batch %d, hq %d, hkv %d, sq %d, sk %d, d %d, dv %d%s%s\n", what, p.batch, p.hq, p.hkv, p.sq, p.sk,
              p.d, p.dv, o.form == Form::automatic ? "" : (std::string(", ") + form_name(o.form) + " only").c_str(),
              o.p_in_io_type ? "" : ", P in f32");
  std::fflush(stdout);
  if (const std::string r = refusal(p); !r.empty()) {
    std::printf("  refused: %s\n", r.c_str());
    return false;
  }
  Trace t;
  bool ok = false;
  std::string result;
  {
    TraceScope scope(&t, stdout);  // each step printed as it happens
    try {
      const auto plan = build(p, o);
      ok = true;
      result = "PLAN from " + plan->source + ", workspace " + std::to_string(plan->workspace) + " bytes";
    } catch (const std::exception& e) {
      result = std::string("NO PLAN: ") + e.what();
    }
  }
  std::printf("  => %s\n", result.c_str());
  std::fflush(stdout);
  return ok;
}

}  // namespace

extern "C" int fp_cudnn_sdpa_diagnose(void) {
  // The CUDA context first, as the gate's process has it before it opens a plug-in (cudnnCreate would
  // make one itself; this says which device, or why there is none).
  int device = -1;
  const cudaError_t ce = cudaFree(nullptr);
  if (ce == cudaSuccess && cudaGetDevice(&device) == cudaSuccess) std::printf("CUDA context: device %d\n", device);
  else std::printf("CUDA context: none (%s)\n", cudaGetErrorName(ce));
  std::fflush(stdout);
  const Cudnn& c = cudnn();
  std::printf("cuDNN plug-in diagnostic: FLASHPROBE_CUDNN_LIB=%s\n", c.path.c_str());
  if (!c.error.empty()) {
    std::printf("  %s\n", c.error.c_str());
    std::fflush(stdout);
    return -1;
  }
  Dl_info info{};
  std::printf("  loaded %s: version %zu, built for CUDA runtime %zu\n",
              dladdr(reinterpret_cast<void*>(c.GetVersion), &info) && info.dli_fname ? info.dli_fname : c.path.c_str(),
              c.version, c.GetCudartVersion());
  std::printf("what cuDNN's engines need (its sub-libraries, NVRTC for the runtime-compiled ones; none is unloaded here):\n");
  for (const char* lib : {"libcudnn_graph.so.9", "libcudnn_heuristic.so.9", "libcudnn_engines_precompiled.so.9",
                          "libcudnn_engines_runtime_compiled.so.9", "libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc-builtins.so.12.8",
                          "libnvrtc-builtins.so.13.0"})
    library(lib);
  int planned = 0, n = 0;
  BuildOptions o;
  o.plans_per_source = 1;
  for (const Fixed& f : fixed_problems()) {
    ++n;
    planned += diagnose(f.what, f.p, o);
  }
  // The first problem in the composite form (the automatic choice tries the unified one first), and
  // with P in f32 as this plug-in's first graph had it.
  BuildOptions composite = o;
  composite.form = Form::composite;
  diagnose(fixed_problems()[0].what, fixed_problems()[0].p, composite);
  composite.p_in_io_type = false;
  diagnose(fixed_problems()[0].what, fixed_problems()[0].p, composite);
  std::printf("\ncuDNN plug-in diagnostic: %d of %d fixed problems got a plan\n", planned, n);
  std::fflush(stdout);
  return n - planned;
}
