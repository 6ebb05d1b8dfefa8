// A subject for `flashprobe gate`: one of flashprobe's own kernels behind the plug-in ABI, built as a
// separate MODULE library exactly as a third party wraps a kernel it has a C++ launch API for: it
// links the kernel's library (flashprobe::kernels), translates fp_problem_v1 into the kernel's own
// problem type, and answers supports() with the kernel's own reason. It must pass the gate.
// The kernel is FLASHPROBE_PROJECT_KERNEL's (read once, at the first call), default "tiled": any name
// of `flashprobe kernels` (mma, wgmma, decode, ref3pass, ...).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/plugin/flashprobe_plugin.h"
#include "flashprobe/plugin/loader.h"

namespace {
using namespace flashprobe;

struct Subject {
  std::string name, description, error;  // error: why no kernel is available (then kernel is null)
  const kernels::KernelInfo* kernel = nullptr;
  DeviceInfo device;
};

const Subject& subject() {
  static const Subject s = [] {
    Subject r;
    const char* env = std::getenv("FLASHPROBE_PROJECT_KERNEL");
    const std::string k = env && *env ? env : "tiled";
    r.name = "flashprobe/" + k;
    r.kernel = kernels::find_kernel(k);
    if (!r.kernel) {
      r.error = "FLASHPROBE_PROJECT_KERNEL=" + k + ": no such kernel; one of " + kernels::kernel_names();
      return r;
    }
    r.description = "flashprobe's '" + k + "' kernel through its launch API, as a separate plug-in";
    const DeviceQuery q = query_devices();
    if (q.devices.empty()) r.error = "no device: " + q.reason;
    else r.device = q.devices.front();
    return r;
  }();
  return s;
}

int supports(const fp_problem_v1* c, char* why, size_t n) {
  const Subject& s = subject();
  std::string reason = s.error;
  if (reason.empty()) {
    const AttnProblem p = attn_problem(*c);
    kernels::Support ok = kernels::Support::valid(p);
    if (ok) ok = s.kernel->supports(s.device, p);
    if (ok) return 1;
    reason = ok.reason;
  }
  std::snprintf(why, n, "%s", reason.c_str());
  return 0;
}

int launch(const fp_problem_v1* c, const fp_tensors_v1* t, char* err, size_t n) {
  const Subject& s = subject();
  void* ws = nullptr;
  try {
    if (!s.kernel) throw std::runtime_error(s.error);
    const AttnProblem p = attn_problem(*c);
    kernels::DeviceTensors d;
    d.q = t->q;
    d.k = t->k;
    d.v = t->v;
    d.o = t->o;
    d.lse = t->lse;
    d.alibi_slopes = t->alibi_slopes;
    d.seqlens_k = t->seqlens_k;
    const auto stream = static_cast<fp_rt::Stream>(t->stream);
    if (const std::size_t bytes = s.kernel->workspace_bytes(p)) {
      if (fp_rt::malloc(&ws, bytes) != fp_rt::kSuccess) throw std::runtime_error("workspace allocation failed");
    }
    s.kernel->launch(p, d, ws, stream);
    if (ws) {  // the workspace lives until the launch is done
      fp_rt::stream_synchronize(stream);
      fp_rt::free(ws);
    }
    return 0;
  } catch (const std::exception& e) {
    if (ws) fp_rt::free(ws);
    std::snprintf(err, n, "%s: %s", s.name.c_str(), e.what());
    return 1;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const fp_plugin_v1* flashprobe_plugin_v1(void) {
  static const fp_plugin_v1 desc = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_v1), subject().name.c_str(),
                                    subject().description.c_str(), supports, launch};
  return &desc;
}
