// The gate's plug-in subjects (plugin/subjects/) load through the loader on any machine: every
// planted-bug library of the build's list names its bug and refuses only what its kernel lacks
// (naming the field); flashprobe's own kernel as a plug-in names the kernel it wraps and, with no
// device, refuses every problem with the reason instead of claiming support. Their GPU behaviour
// (the bugs killed, the project kernel holding) is run-all's gate-plugins stage.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "flashprobe/core/device_info.h"
#include "flashprobe/plugin/loader.h"

using namespace flashprobe;

namespace {
std::string plugin_dir() {
  const char* e = std::getenv("FLASHPROBE_PLUGIN_DIR");
  return e ? e : FP_PLUGIN_DIR;
}
}  // namespace

TEST(PluginSubjects, EveryPlantedBugLoadsAndNamesItsBug) {
  std::ifstream list(plugin_dir() + "/planted_bugs.txt");
  ASSERT_TRUE(list) << plugin_dir() << "/planted_bugs.txt (written by plugin/subjects/CMakeLists.txt)";
  int n = 0;
  for (std::string bug; list >> bug; ++n) {
    const auto pl = Plugin::load(plugin_dir() + "/libfp_bug_" + bug + ".so");
    EXPECT_EQ(pl.name(), "bug/" + bug);
    AttnProblem p;
    p.hq = 4;
    p.hkv = 2;
    p.sq = 5;
    p.sk = 37;
    p.causal = Causal::bottom_right;
    p.window_left = 3;
    p.softcap = 20;
    p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625};
    p.seqlens_k = {20};
    EXPECT_EQ(pl.supports(p), "") << bug;
    p.dv = 320;
    EXPECT_EQ(pl.supports(p), "dv=320: at most 256 in this kernel") << bug;
  }
  EXPECT_GE(n, 8) << "the bug classes of plugin/subjects/planted_bugs.cu";
}

TEST(PluginSubjects, ProjectKernelPluginWrapsTheNamedKernel) {
  const auto pl = Plugin::load(plugin_dir() + "/libfp_project_kernel.so");
  EXPECT_EQ(pl.name(), "flashprobe/tiled");  // FLASHPROBE_PROJECT_KERNEL unset in CTest
  AttnProblem p;
  p.d = p.dv = 72;
  const std::string why = pl.supports(p);
  if (!has_device()) {
    EXPECT_EQ(why.rfind("no device: ", 0), 0u) << why;
  } else {
    EXPECT_NE(why.find("d=72"), std::string::npos) << why;  // tiled's own reason
    p.d = p.dv = 64;
    EXPECT_EQ(pl.supports(p), "");
  }
}

#ifdef FP_HAVE_CUDNN_PLUGIN
// Without cuDNN the plug-in refuses every problem saying what it tried; what its graph does not
// express is refused naming the field, cuDNN or not.
TEST(PluginSubjects, CudnnPluginRefusesWithAReasonWhenCudnnIsAbsent) {
  setenv("FLASHPROBE_CUDNN_LIB", "/nonexistent/libcudnn.so.9", 1);  // read at the first supports()
  const auto pl = Plugin::load(plugin_dir() + "/libfp_cudnn_sdpa.so");
  EXPECT_EQ(pl.name(), "cudnn-sdpa");
  AttnProblem p;
  EXPECT_EQ(pl.supports(p).rfind("cuDNN not found: dlopen(\"/nonexistent/libcudnn.so.9\") failed", 0), 0u) << pl.supports(p);
  p.softcap = 30;
  EXPECT_EQ(pl.supports(p).rfind("softcap: ", 0), 0u) << pl.supports(p);
  p.softcap = 0;
  p.dtype = p.out_dtype = DType::f32;
  EXPECT_EQ(pl.supports(p).rfind("dtype: ", 0), 0u) << pl.supports(p);
  p.dtype = p.out_dtype = DType::bf16;
  p.d = p.dv = 72 + 4;
  EXPECT_EQ(pl.supports(p).rfind("d=76, dv=76: ", 0), 0u) << pl.supports(p);
  p.d = p.dv = 64;
  // cuDNN's SDPA takes bottom-right causal only with sq <= sk: refused before cuDNN is asked.
  p.causal = Causal::bottom_right;
  p.sq = 9;
  p.sk = 8;
  EXPECT_EQ(pl.supports(p).rfind("causal bottom-right with sq=9 > sk=8: ", 0), 0u) << pl.supports(p);
  p.sk = 9;
  EXPECT_EQ(pl.supports(p).rfind("cuDNN not found", 0), 0u) << pl.supports(p);
  p.causal = Causal::none;
  p.sq = 1;
  p.with_layout(TensorLayout::bhsd);
  p.sk = 3;  // BHSD K: the head stride is sk * d, the seq stride d: all multiples of 8
  EXPECT_EQ(pl.supports(p).rfind("cuDNN not found", 0), 0u) << pl.supports(p);
}
#endif
