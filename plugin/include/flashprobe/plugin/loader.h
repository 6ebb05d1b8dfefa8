#pragma once
// Loading external kernels through the plug-in ABI (flashprobe_plugin.h): dlopen, version check,
// and conversion of an AttnProblem to the ABI's plain-C problem.
//
//   auto plugin = flashprobe::Plugin::load("./libmykernel.so");   // UsageError on any mismatch
//   if (auto why = plugin.supports(problem); !why.empty()) skip(why);
//   plugin.launch(problem, tensors);
#include <memory>
#include <string>
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/plugin/flashprobe_plugin.h"

namespace flashprobe {

// The C view of a problem; owns the host arrays the view points to.
struct PluginProblem {
  fp_problem_v1 c{};
  std::vector<int32_t> seqlens;
  std::vector<double> slopes;
  explicit PluginProblem(const AttnProblem& p);
  PluginProblem(const PluginProblem&) = delete;
  PluginProblem& operator=(const PluginProblem&) = delete;
};
// The inverse, for a plug-in that wraps a kernel taking flashprobe's own problem type
// (plugin/subjects/project_kernel_plugin.cpp): every field back, the scale as resolved.
AttnProblem attn_problem(const fp_problem_v1& c);

class Plugin {
 public:
  static Plugin load(const std::string& path);
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& path() const { return path_; }
  // Empty if supported, else the plug-in's reason.
  std::string supports(const AttnProblem& p) const;
  // Throws std::runtime_error with the plug-in's message on failure.
  void launch(const AttnProblem& p, const fp_tensors_v1& t) const;

  // The optional backward entry point (flashprobe_plugin_backward_v1): absent unless exported.
  bool has_backward() const { return bwd_ != nullptr; }
  // Empty if supported, else the plug-in's reason (or that it has no backward).
  std::string supports_backward(const AttnProblem& p) const;
  // Throws std::runtime_error with the plug-in's message on failure, UsageError without a backward.
  void launch_backward(const AttnProblem& p, const fp_backward_tensors_v1& t) const;

 private:
  std::shared_ptr<void> handle_;
  const fp_plugin_v1* desc_ = nullptr;
  const fp_plugin_backward_v1* bwd_ = nullptr;
  std::string name_, description_, path_;
};

}  // namespace flashprobe
