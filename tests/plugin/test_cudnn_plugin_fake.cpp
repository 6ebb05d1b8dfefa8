// cuDNN's plug-in (plugin/subjects/cudnn_sdpa_plugin.cpp) against a stand-in cuDNN (fake_cudnn.cpp)
// that holds the SDPA engine's documented rule on P's type: the graph the plug-in builds gets an
// engine for every mask and type it accepts, a plan cuDNN refuses makes supports() refuse with the
// step and cuDNN's status, and a launch cuDNN refuses fails naming its step and status. Whether real
// cuDNN runs the graph is run-all's cudnn-diagnose and gate-plugins stages on a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "flashprobe/plugin/loader.h"

using namespace flashprobe;

namespace {
const Plugin& plugin() {
  static const Plugin pl = [] {
    setenv("FLASHPROBE_CUDNN_LIB", FP_FAKE_CUDNN, 1);  // read at the plug-in's first supports()
    return Plugin::load(std::string(FP_PLUGIN_DIR) + "/libfp_cudnn_sdpa.so");
  }();
  return pl;
}

AttnProblem problem(int hq, int hkv, int sq, int sk, int d, DType t, Causal c) {
  AttnProblem p;
  p.batch = 2;
  p.hq = hq;
  p.hkv = hkv;
  p.sq = sq;
  p.sk = sk;
  p.d = p.dv = d;
  p.dtype = p.out_dtype = t;
  p.causal = c;
  return p;
}
}  // namespace

TEST(CudnnPluginFake, EveryAcceptedMaskAndTypeGetsAnEngine) {
  for (const DType t : {DType::f16, DType::bf16})
    for (const Causal c : {Causal::none, Causal::top_left, Causal::bottom_right}) {
      EXPECT_EQ(plugin().supports(problem(4, 4, 16, 40, 64, t, c)), "");
      EXPECT_EQ(plugin().supports(problem(8, 2, 1, 24, 128, t, c)), "");  // GQA, one query
    }
}

TEST(CudnnPluginFake, APlanCudnnRefusesIsRefusedNamingTheStepAndStatus) {
  setenv("FAKE_CUDNN_PLAN_STATUS", "3000", 1);  // CUDNN_STATUS_NOT_SUPPORTED for every plan
  const AttnProblem p = problem(2, 1, 24, 32, 96, DType::f16, Causal::none);
  const std::string why = plugin().supports(p);
  unsetenv("FAKE_CUDNN_PLAN_STATUS");
  EXPECT_EQ(why.rfind("cuDNN 91900 has no engine for this graph: heuristics mode A: 1 configurations; heuristics mode "
                      "FALLBACK: 1 configurations; engines by global index: 2 of 2 take the graph; 4 plans failed, the first: "
                      "finalize execution plan from heuristics mode A, configuration 0: CUDNN_STATUS_NOT_SUPPORTED (3000) "
                      "(fake cuDNN: plan refused)",
                      0),
            0u)
      << why;
  EXPECT_EQ(plugin().supports(p), why) << "the refusal of a shape is remembered";
}

TEST(CudnnPluginFake, ALaunchCudnnRefusesFailsNamingTheStepAndStatus) {
  const AttnProblem p = problem(2, 2, 8, 8, 64, DType::bf16, Causal::top_left);
  ASSERT_EQ(plugin().supports(p), "");
  alignas(16) static char buffer[64];  // never read: the stand-in's execute refuses first
  const fp_tensors_v1 t{buffer, buffer, buffer, buffer, reinterpret_cast<float*>(buffer), nullptr, nullptr, nullptr};
  try {
    plugin().launch(p, t);
    FAIL() << "the stand-in's cudnnBackendExecute refuses: launch must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "plug-in cudnn-sdpa launch failed: cudnn: cudnnBackendExecute (plan from heuristics mode A, configuration 0): "
                 "CUDNN_STATUS_NOT_SUPPORTED (3000) (fake cuDNN: no GPU behind this stand-in)");
  }
}
