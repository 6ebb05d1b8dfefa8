// The cuDNN plug-in's diagnostic, exported beside the plug-in ABI (scripts/gpu/cudnn_diagnose.py calls
// it; run-all's cudnn-diagnose stage runs that on a GPU):
//
//     int fp_cudnn_sdpa_diagnose(void);
//
// prints to stdout which cuDNN was loaded (its file, version, the CUDA runtime it was built for, which of
// its sub-libraries and NVRTC load), then for a handful of fixed problems (d 64/128, d != dv, causal
// none / top-left / bottom-right, f16/bf16, GQA, one query, a shape next to the first) every step of
// the graph's build with cuDNN's status (each plan's finalize timed), the configurations heuristics mode A and FALLBACK give, the engines (by global index)
// that take the graph and the plan made (the unified SDPA operation first where it applies, then the
// composite graph); last the first problem in the composite form, with P in f16 and in f32 (the graph
// this plug-in had first). Returns how many of the fixed problems got no plan (0 is the expectation), -1 when cuDNN
// did not load.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <string>
#include <vector>

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

// Whether `name` loads (through the loader's search path), and from where.
void library(const char* name) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    std::printf("  %-40s does not load: %s\n", name, e ? e : "?");
    return;
  }
  link_map* map = nullptr;
  const bool where = dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name;
  std::printf("  %-40s loads%s%s\n", name, where ? " from " : "", where ? map->l_name : "");
  dlclose(h);
}

// One problem: its refusal or its build, step by step.
bool diagnose(const char* what, const fp_problem_v1& p, const BuildOptions& o) {
  std::printf("\n== %s: batch %d, hq %d, hkv %d, sq %d, sk %d, d %d, dv %d%s%s\n", what, p.batch, p.hq, p.hkv, p.sq, p.sk,
              p.d, p.dv, o.form == Form::automatic ? "" : (std::string(", ") + form_name(o.form) + " only").c_str(),
              o.p_in_io_type ? "" : ", P in f32");
  if (const std::string r = refusal(p); !r.empty()) {
    std::printf("  refused: %s\n", r.c_str());
    return false;
  }
  Trace t;
  bool ok = false;
  std::string result;
  {
    TraceScope scope(&t);
    try {
      const auto plan = build(p, o);
      ok = true;
      result = "PLAN from " + plan->source + ", workspace " + std::to_string(plan->workspace) + " bytes";
    } catch (const std::exception& e) {
      result = std::string("NO PLAN: ") + e.what();
    }
  }
  for (const auto& line : t) std::printf("  %s\n", line.c_str());
  std::printf("  => %s\n", result.c_str());
  std::fflush(stdout);
  return ok;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int fp_cudnn_sdpa_diagnose(void) {
  const Cudnn& c = cudnn();
  std::printf("cuDNN plug-in diagnostic: FLASHPROBE_CUDNN_LIB=%s\n", c.path.c_str());
  if (!c.error.empty()) {
    std::printf("  %s\n", c.error.c_str());
    return -1;
  }
  Dl_info info{};
  std::printf("  loaded %s: version %zu, built for CUDA runtime %zu\n",
              dladdr(reinterpret_cast<void*>(c.GetVersion), &info) && info.dli_fname ? info.dli_fname : c.path.c_str(),
              c.version, c.GetCudartVersion());
  std::printf("what cuDNN's engines need (its sub-libraries, NVRTC for the runtime-compiled ones):\n");
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
