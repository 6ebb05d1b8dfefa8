#include "flashprobe/plugin/loader.h"

#include <dlfcn.h>

#include <stdexcept>

#include "flashprobe/core/error.h"

namespace flashprobe {

PluginProblem::PluginProblem(const AttnProblem& p) {
  auto s4 = [](const Strides& s, int64_t* out) {
    out[0] = s.b;
    out[1] = s.s;
    out[2] = s.h;
    out[3] = s.d;
  };
  c.batch = p.batch;
  c.hq = p.hq;
  c.hkv = p.hkv;
  c.sq = p.sq;
  c.sk = p.sk;
  c.d = p.d;
  c.dv = p.dv;
  c.dtype = static_cast<int32_t>(p.dtype);
  c.out_dtype = static_cast<int32_t>(p.out_dtype);
  s4(p.q_strides(), c.q_strides);
  s4(p.k_strides(), c.k_strides);
  s4(p.v_strides(), c.v_strides);
  s4(p.o_strides(), c.o_strides);
  c.scale = p.effective_scale();
  c.causal = static_cast<int32_t>(p.causal);
  c.kv_offset = p.kv_offset;
  c.window_left = p.window_left;
  c.window_right = p.window_right;
  c.softcap = p.softcap;
  seqlens.assign(p.seqlens_k.begin(), p.seqlens_k.end());
  slopes = p.alibi_slopes;
  c.seqlens_k = seqlens.empty() ? nullptr : seqlens.data();
  c.alibi_slopes = slopes.empty() ? nullptr : slopes.data();
  static_assert(static_cast<int>(DType::f16) == FP_DTYPE_F16 && static_cast<int>(DType::bf16) == FP_DTYPE_BF16 &&
                static_cast<int>(DType::f32) == FP_DTYPE_F32);
  static_assert(static_cast<int>(Causal::bottom_right) == FP_CAUSAL_BOTTOM_RIGHT &&
                static_cast<int>(Causal::top_left) == FP_CAUSAL_TOP_LEFT);
}

AttnProblem attn_problem(const fp_problem_v1& c) {
  auto s4 = [](const int64_t* s) { return Strides{s[0], s[1], s[2], s[3]}; };
  AttnProblem p;
  p.batch = c.batch;
  p.hq = c.hq;
  p.hkv = c.hkv;
  p.sq = c.sq;
  p.sk = c.sk;
  p.d = c.d;
  p.dv = c.dv;
  p.dtype = static_cast<DType>(c.dtype);
  p.out_dtype = static_cast<DType>(c.out_dtype);
  p.q = s4(c.q_strides);
  p.k = s4(c.k_strides);
  p.v = s4(c.v_strides);
  p.o = s4(c.o_strides);
  p.scale = c.scale;
  p.causal = static_cast<Causal>(c.causal);
  p.kv_offset = c.kv_offset;
  p.window_left = c.window_left;
  p.window_right = c.window_right;
  p.softcap = c.softcap;
  if (c.alibi_slopes) p.alibi_slopes.assign(c.alibi_slopes, c.alibi_slopes + c.hq);
  if (c.seqlens_k) p.seqlens_k.assign(c.seqlens_k, c.seqlens_k + c.batch);
  return p;
}

Plugin Plugin::load(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw UsageError("plug-in '" + path + "' cannot be loaded: " + dlerror());
  Plugin pl;
  pl.handle_ = std::shared_ptr<void>(h, [](void* x) { dlclose(x); });
  pl.path_ = path;
  auto entry = reinterpret_cast<fp_plugin_entry_v1>(dlsym(h, FLASHPROBE_PLUGIN_ENTRY_V1));
  if (!entry)
    throw UsageError("plug-in '" + path + "' does not export " FLASHPROBE_PLUGIN_ENTRY_V1
                     " (declare it extern \"C\" and visible)");
  pl.desc_ = entry();
  if (!pl.desc_) throw UsageError("plug-in '" + path + "': " FLASHPROBE_PLUGIN_ENTRY_V1 "() returned NULL");
  if (pl.desc_->abi_version != FLASHPROBE_PLUGIN_ABI_VERSION)
    throw UsageError("plug-in '" + path + "' has ABI version " + std::to_string(pl.desc_->abi_version) +
                     "; this flashprobe accepts version " + std::to_string(FLASHPROBE_PLUGIN_ABI_VERSION));
  if (pl.desc_->struct_size < sizeof(fp_plugin_v1))
    throw UsageError("plug-in '" + path + "' descriptor is " + std::to_string(pl.desc_->struct_size) +
                     " bytes; at least " + std::to_string(sizeof(fp_plugin_v1)) + " expected");
  if (!pl.desc_->name || !pl.desc_->supports || !pl.desc_->launch)
    throw UsageError("plug-in '" + path + "' descriptor lacks a name, supports() or launch()");
  pl.name_ = pl.desc_->name;
  pl.description_ = pl.desc_->description ? pl.desc_->description : "";
  if (auto bwd = reinterpret_cast<fp_plugin_backward_entry_v1>(dlsym(h, FLASHPROBE_PLUGIN_BACKWARD_ENTRY_V1))) {
    pl.bwd_ = bwd();
    const std::string what = "plug-in '" + path + "': " FLASHPROBE_PLUGIN_BACKWARD_ENTRY_V1 "()";
    if (!pl.bwd_) throw UsageError(what + " returned NULL");
    if (pl.bwd_->abi_version != FLASHPROBE_PLUGIN_ABI_VERSION)
      throw UsageError(what + " has ABI version " + std::to_string(pl.bwd_->abi_version) + "; this flashprobe accepts version " +
                       std::to_string(FLASHPROBE_PLUGIN_ABI_VERSION));
    if (pl.bwd_->struct_size < sizeof(fp_plugin_backward_v1))
      throw UsageError(what + " descriptor is " + std::to_string(pl.bwd_->struct_size) + " bytes; at least " +
                       std::to_string(sizeof(fp_plugin_backward_v1)) + " expected");
    if (!pl.bwd_->supports || !pl.bwd_->launch) throw UsageError(what + " descriptor lacks supports() or launch()");
  }
  return pl;
}

std::string Plugin::supports(const AttnProblem& p) const {
  PluginProblem pp(p);
  char why[512] = {0};
  if (desc_->supports(&pp.c, why, sizeof why)) return "";
  return why[0] ? why : "refused by plug-in " + name_ + " (no reason given)";
}

void Plugin::launch(const AttnProblem& p, const fp_tensors_v1& t) const {
  PluginProblem pp(p);
  char err[512] = {0};
  if (desc_->launch(&pp.c, &t, err, sizeof err) != 0)
    throw std::runtime_error("plug-in " + name_ + " launch failed: " + (err[0] ? err : "(no message)"));
}

std::string Plugin::supports_backward(const AttnProblem& p) const {
  if (!bwd_) return "plug-in " + name_ + " has no backward (it does not export " FLASHPROBE_PLUGIN_BACKWARD_ENTRY_V1 ")";
  PluginProblem pp(p);
  char why[512] = {0};
  if (bwd_->supports(&pp.c, why, sizeof why)) return "";
  return why[0] ? why : "refused by plug-in " + name_ + "'s backward (no reason given)";
}

void Plugin::launch_backward(const AttnProblem& p, const fp_backward_tensors_v1& t) const {
  if (!bwd_) throw UsageError("plug-in " + name_ + " has no backward (it does not export " FLASHPROBE_PLUGIN_BACKWARD_ENTRY_V1 ")");
  PluginProblem pp(p);
  char err[512] = {0};
  if (bwd_->launch(&pp.c, &t, err, sizeof err) != 0)
    throw std::runtime_error("plug-in " + name_ + " backward launch failed: " + (err[0] ? err : "(no message)"));
}

}  // namespace flashprobe
