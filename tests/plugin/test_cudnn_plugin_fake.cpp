// cuDNN's plug-in (plugin/subjects/cudnn_sdpa_plugin.cpp) against a stand-in cuDNN (fake_cudnn.cpp)
// that holds the SDPA engine's documented rule on P's type: the graph the plug-in builds gets an
// engine for every mask and type it accepts (the unified SDPA operation first without a mask, the
// composite graph where that is refused), a plan cuDNN refuses makes supports() refuse with the step
// and cuDNN's status, and a launch cuDNN refuses fails naming its step and status. Whether real
// cuDNN runs the graph is run-all's cudnn-diagnose and gate-plugins stages on a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "../common/test_problem.h"
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
  AttnProblem p = flashprobe::testing::test_problem(2, hq, hkv, sq, sk, d, t);
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
  const std::string each = "heuristics A: 1, heuristics FALLBACK: 1, engines taking the graph: 2 of 2, 4 plans failed to finalize, "
                           "the first with CUDNN_STATUS_NOT_SUPPORTED (3000) (fake cuDNN: plan refused)";
  EXPECT_EQ(why, "cuDNN 91900 has no engine for this graph: unified SDPA operation: " + each + "; composite graph: " + each);
  EXPECT_EQ(plugin().supports(p), why) << "the refusal of a shape is remembered";
}

// What a launch says names the plan's form and source; the launch fails the property (the gate's
// GateCommand.ALaunchThatFailsFailsTheProperty).
namespace {
std::string launch_error(const AttnProblem& p) {
  alignas(16) static char buffer[64];  // never read: the stand-in's execute refuses first
  const fp_tensors_v1 t{buffer, buffer, buffer, buffer, reinterpret_cast<float*>(buffer), nullptr, nullptr, nullptr};
  try {
    plugin().launch(p, t);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(launch did not fail)";
}
}  // namespace

TEST(CudnnPluginFake, ALaunchCudnnRefusesFailsNamingTheStepAndStatus) {
  const AttnProblem p = problem(2, 2, 8, 8, 64, DType::bf16, Causal::top_left);
  ASSERT_EQ(plugin().supports(p), "");
  EXPECT_EQ(launch_error(p),
            "plug-in cudnn-sdpa launch failed: cudnn: cudnnBackendExecute (plan from composite graph, heuristics A, configuration 0): "
            "CUDNN_STATUS_NOT_SUPPORTED (3000) (fake cuDNN: no GPU behind this stand-in)");
}

// Without a mask the unified SDPA operation is asked first, as the frontend prefers it; a cuDNN that
// does not take it leaves the composite graph.
TEST(CudnnPluginFake, TheUnifiedOperationFirstThenTheCompositeGraph) {
  const AttnProblem p = problem(4, 2, 16, 16, 64, DType::f16, Causal::none);
  ASSERT_EQ(plugin().supports(p), "");
  EXPECT_NE(launch_error(p).find("(plan from unified SDPA operation, heuristics A, configuration 0)"), std::string::npos)
      << launch_error(p);
  setenv("FAKE_CUDNN_NO_UNIFIED", "1", 1);
  const AttnProblem q = problem(4, 2, 16, 24, 64, DType::f16, Causal::none);
  const std::string why = plugin().supports(q);
  const std::string err = launch_error(q);
  unsetenv("FAKE_CUDNN_NO_UNIFIED");
  EXPECT_EQ(why, "");
  EXPECT_NE(err.find("(plan from composite graph, heuristics A, configuration 0)"), std::string::npos) << err;
}

// The graphs the plug-in builds are NVIDIA cudnn-frontend's, descriptor for descriptor: the frontend's
// (3929da2) for the same problems, run against this stand-in and written as text by
// tests/scripts/cudnn_graph_text.py, are tests/plugin/data/cudnn-frontend-graphs/ (README there).
namespace {
std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The text of the graphs the plug-in builds for p (under the environment variable `env`, if given).
std::string graph_text(const AttnProblem& p, const char* env = nullptr) {
  static int calls = 0;  // a file per call: the stand-in reopens its log when the name changes
  const std::string log = ::testing::TempDir() + "cudnn_graph_" + std::to_string(getpid()) + "_" + std::to_string(++calls) + ".log";
  std::remove(log.c_str());
  setenv("FAKE_CUDNN_LOG", log.c_str(), 1);
  if (env) setenv(env, "1", 1);
  const std::string why = plugin().supports(p);
  unsetenv("FAKE_CUDNN_LOG");
  if (env) unsetenv(env);
  if (!why.empty()) return "refused: " + why;
  const std::string cmd = std::string(FP_PYTHON) + " " + FP_GRAPH_TEXT + " " + FP_CUDNN_GRAPH_H + " " + log;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return "cannot run " + cmd;
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  std::remove(log.c_str());
  return out;
}
}  // namespace

TEST(CudnnPluginFake, TheGraphsAreTheFrontends) {
  if (std::string(FP_PYTHON).find("NOTFOUND") != std::string::npos) GTEST_SKIP() << "no python3 for cudnn_graph_text.py";
  // batch 2, hq 8, hkv 2, sq 100, sk 300, d 128, dv 64, contiguous BSHD: as the golden files.
  auto p = [](DType t, Causal c) {
    AttnProblem q = problem(8, 2, 100, 300, 128, t, c);
    q.dv = 64;
    return q;
  };
  const std::string dir = std::string(FP_SOURCE_DIR) + "/tests/plugin/data/cudnn-frontend-graphs/";
  EXPECT_EQ(graph_text(p(DType::f16, Causal::none)), read_file(dir + "unified-f16.txt"));
  // With the unified operation refused, the composite graph follows it in the log.
  EXPECT_EQ(graph_text(p(DType::bf16, Causal::none), "FAKE_CUDNN_NO_UNIFIED"),
            read_file(dir + "unified-bf16.txt") + read_file(dir + "composite-bf16.txt"));
  EXPECT_EQ(graph_text(p(DType::bf16, Causal::top_left)), read_file(dir + "top-left-bf16.txt"));
  EXPECT_EQ(graph_text(p(DType::f16, Causal::bottom_right)), read_file(dir + "bottom-right-f16.txt"));
}
