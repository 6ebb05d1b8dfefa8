// Loading plug-ins: clear refusals for missing files, missing entry points and ABI mismatches; the
// example plug-in loads, names itself and refuses what it does not implement with a reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "flashprobe/core/error.h"
#include "flashprobe/plugin/loader.h"

using namespace flashprobe;

namespace {
std::string plugin_dir() {
  const char* e = std::getenv("FLASHPROBE_PLUGIN_DIR");
  return e ? e : FP_PLUGIN_DIR;
}
std::string message_of(const std::string& path) {
  try {
    Plugin::load(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(PluginLoader, MissingFileIsAUsageErrorNamingThePath) {
  const auto m = message_of("/nonexistent/libnothing.so");
  EXPECT_NE(m.find("/nonexistent/libnothing.so"), std::string::npos) << m;
}

TEST(PluginLoader, LibraryWithoutTheEntryPointIsRefused) {
  const auto m = message_of("libm.so.6");
  EXPECT_NE(m.find("does not export flashprobe_plugin_v1"), std::string::npos) << m;
}

TEST(PluginLoader, AbiVersionMismatchNamesBothVersions) {
  const auto m = message_of(plugin_dir() + "/libfp_bad_version_plugin.so");
  EXPECT_NE(m.find("ABI version 2"), std::string::npos) << m;
  EXPECT_NE(m.find("accepts version 1"), std::string::npos) << m;
}

TEST(PluginLoader, ProblemIsTranslatedFieldByField) {
  AttnProblem p;
  p.batch = 2; p.hq = 6; p.hkv = 3; p.sq = 5; p.sk = 9; p.d = 40; p.dv = 24;
  p.dtype = DType::bf16; p.out_dtype = DType::f32; p.causal = Causal::top_left; p.kv_offset = 4;
  p.window_left = 3; p.softcap = 30; p.seqlens_k = {9, 0}; p.alibi_slopes = {1, 2, 3, 4, 5, 6};
  p.with_layout(TensorLayout::bhsd);
  PluginProblem c(p);
  EXPECT_EQ(c.c.hq, 6);
  EXPECT_EQ(c.c.dv, 24);
  EXPECT_EQ(c.c.dtype, FP_DTYPE_BF16);
  EXPECT_EQ(c.c.out_dtype, FP_DTYPE_F32);
  EXPECT_EQ(c.c.causal, FP_CAUSAL_TOP_LEFT);
  EXPECT_DOUBLE_EQ(c.c.scale, 1.0 / std::sqrt(40.0));
  EXPECT_EQ(c.c.q_strides[2], p.q_strides().h);
  EXPECT_EQ(c.c.seqlens_k[1], 0);
  EXPECT_EQ(c.c.alibi_slopes[5], 6.0);
  EXPECT_EQ(c.c.window_left, 3);
  EXPECT_EQ(c.c.window_right, -1);
  // And back: the same problem, its strides explicit and its scale resolved.
  AttnProblem back = attn_problem(c.c);
  EXPECT_EQ(back.scale, p.effective_scale());
  back.scale = p.scale;
  EXPECT_EQ(back, p);
}

#ifdef FP_HAVE_EXAMPLE_PLUGIN
TEST(PluginLoader, ExamplePluginLoadsAndRefusesWhatItLacksWithAReason) {
  const auto pl = Plugin::load(plugin_dir() + "/libfp_naive_plugin.so");
  EXPECT_EQ(pl.name(), "naive");
  EXPECT_FALSE(pl.has_backward());
  AttnProblem p;
  EXPECT_EQ(pl.supports(p), "");
  EXPECT_NE(pl.supports_backward(p).find("has no backward"), std::string::npos);
  p.softcap = 10;
  EXPECT_NE(pl.supports(p).find("softcap"), std::string::npos);
  p.softcap = 0;
  p.window_left = 2;
  EXPECT_NE(pl.supports(p).find("window"), std::string::npos);
}
#endif

TEST(PluginLoader, TheOptionalBackwardEntryPointIsLoadedWhereExported) {
  const auto pl = Plugin::load(plugin_dir() + "/libfp_backward_stub_plugin.so");
  ASSERT_TRUE(pl.has_backward());
  AttnProblem p;
  p.batch = 2;
  p.hq = 3;
  p.d = p.dv = 64;
  EXPECT_EQ(pl.supports_backward(p), "");
  fp_backward_tensors_v1 t{};
  try {
    pl.launch_backward(p, t);
    ADD_FAILURE() << "the stub's backward launch reports an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stub backward: no device code (asked for b2 hq3)"), std::string::npos) << e.what();
  }
  p.d = p.dv = 128;
  EXPECT_EQ(pl.supports_backward(p), "d=128: the stub's backward takes d <= 64");
}
