// The backward kernels' table, their parameters and the backward dispatcher (host code, every backend).
#include <sstream>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/backward.h"
#include "src/bwd_params.h"
#include "src/mma/mma_bwd_registry.h"

namespace flashprobe::kernels {

namespace {
// dvec's floats, rounded up to 4 in the atomic mode: dq_acc after it starts 16-byte aligned (mma_bwd
// adds float pairs with one instruction).
std::size_t dvec_floats(const AttnProblem& p, bool deterministic) {
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.hq * p.sq;
  return deterministic ? rows : (rows + 3) / 4 * 4;
}
}  // namespace

std::size_t backward_workspace_bytes(const AttnProblem& p, bool deterministic) {
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.hq * p.sq;
  return sizeof(float) * (dvec_floats(p, deterministic) + (deterministic ? 0 : rows * static_cast<std::size_t>(p.d)));
}

BwdParams make_bwd_params(const AttnProblem& p, const BwdDeviceTensors& t, void* workspace, bool deterministic) {
  BwdParams r{};
  r.f = make_params(p, t.fwd);
  if (!t.fwd.o || !t.fwd.lse) throw UsageError("a backward kernel reads the forward's O and LSE: BwdDeviceTensors::fwd.o/lse are null");
  if (!t.dout) throw UsageError("BwdDeviceTensors::dout (dO) is null");
  if (!t.dq || !t.dk || !t.dv) throw UsageError("BwdDeviceTensors::dq, dk and dv must all be set");
  if (!workspace && backward_workspace_bytes(p, deterministic) > 0)
    throw UsageError("the backward kernel needs " + std::to_string(backward_workspace_bytes(p, deterministic)) +
                     " bytes of workspace");
  r.dout = t.dout;
  r.dq = t.dq;
  r.dk = t.dk;
  r.dv = t.dv;
  r.dvec = static_cast<float*>(workspace);
  r.dq_acc = deterministic ? nullptr : r.dvec + dvec_floats(p, deterministic);
  DeviceTensors as_o = t.fwd;  // dO has O's strides and type: the same alignment rule
  as_o.o = const_cast<void*>(t.dout);
  r.dout_rows16 = make_params(p, as_o).o_rows16;
  return r;
}

namespace {

Support bwd_supports(const DeviceInfo&, const AttnProblem& p) {
  if (Support s = Support::valid(p); !s) return s;
  if (p.d > kBwdMaxDim || p.dv > kBwdMaxDim)
    return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": the scalar backward kernels take d, dv <= " +
                       std::to_string(kBwdMaxDim));
  if (p.hkv > kMaxGridYZ || p.batch > kMaxGridYZ || p.hq > kMaxGridYZ)
    return Support::no("batch=" + std::to_string(p.batch) + ", hq=" + std::to_string(p.hq) + ": grid.y/z limit " +
                       std::to_string(kMaxGridYZ));
  return Support::yes();
}

BackwardKernelInfo make(const char* name, bool deterministic, const char* what) {
  BackwardKernelInfo k;
  k.name = name;
  k.description = what;
  k.deterministic = deterministic;
  k.supports = bwd_supports;
  k.workspace_bytes = [deterministic](const AttnProblem& p) { return backward_workspace_bytes(p, deterministic); };
  k.launch = [deterministic, n = k.name](const AttnProblem& p, const BwdDeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
    (void)n;
    detail::launch_backward<Bug::none>(make_bwd_params(p, t, ws, deterministic), deterministic, s);
#else
    (void)p, (void)t, (void)ws, (void)s;
    throw NoDevice("no GPU device: this build has no GPU backend, " + n + " cannot launch");
#endif
  };
  return k;
}

}  // namespace

const std::vector<BackwardKernelInfo>& backward_kernels() {
  // In the order of preference: the tensor-core kernels where they apply. The deterministic mma_bwd_det
  // comes before the atomic mma_bwd in both modes: it was faster on every shape timed on the H100
  // (1.30x, geometric mean of 13 shapes: reports/data/h100-80gb-hbm3/2026-11-27-bwd-bench-ec0c125) and
  // on the H200 (h200-141gb-hbm3e/2026-11-26-gate-893e08a).
  static const std::vector<BackwardKernelInfo> table{
      make_mma_bwd_kernel(true),
      make_mma_bwd_kernel(false),
      make_mma_bwd_amd_kernel(),
      make("tiled_bwd", false,
           "scalar FlashAttention-2 backward: dK/dV per key block, dQ added across key blocks with fp32 atomics"),
      make("tiled_bwd_det", true,
           "scalar FlashAttention-2 backward, deterministic: dQ per query row over the key blocks in order, no atomics"),
      // The tensor-core backward in 128-key blocks (compiled, not yet measured), last so that it is
      // never preferred: checked and timed beside the shipped shape by every backward test and bench.
      make_mma_bwd_kernel(false, MmaBwdShapeId::k128),
      make_mma_bwd_kernel(true, MmaBwdShapeId::k128),
      // The 128-key shape with the bulk dQ reduction (fast mode, d = 64, sm_90; compiled, not yet
      // measured), last for the same reason.
      make_mma_bwd_kernel(false, MmaBwdShapeId::k128_bulk),
      // FlashAttention-2's block with its two-dimensional wave split, last in the order; the fast mode
      // takes mma_bwd_fa2 ahead of it where its measured rule says so (`preferred`).
      make_mma_bwd_kernel(false, MmaBwdShapeId::fa2),
      make_mma_bwd_kernel(true, MmaBwdShapeId::fa2),
  };
  return table;
}

const BackwardKernelInfo* find_backward_kernel(const std::string& name) {
  for (auto& k : backward_kernels())
    if (k.name == name) return &k;
  return nullptr;
}

std::string backward_kernel_names() {
  std::string s;
  for (auto& k : backward_kernels()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

std::string BackwardSelection::describe() const {
  std::ostringstream s;
  s << (kernel ? kernel->name + ": " : std::string("none: ")) << reason;
  for (auto& r : rejected) s << "\n  not " << r.kernel << ": " << r.reason;
  return s.str();
}

BackwardSelection select_backward(const DeviceInfo& dev, const AttnProblem& p, bool deterministic) {
  return select_backward(dev, p, deterministic, binary_targets(), backward_kernels());
}

BackwardSelection select_backward(const DeviceInfo& dev, const AttnProblem& p, bool deterministic,
                                  const BinaryTargets& bin, const std::vector<BackwardKernelInfo>& table) {
  BackwardSelection sel;
  if (auto why = binary_runs_on(bin, dev); !why.empty()) {
    sel.reason = why;
    return sel;
  }
  // A kernel with a measured preference that covers the problem, ahead of the order (same checks).
  std::vector<Rejection> passed_over;
  for (const auto& k : table) {
    if (!k.preferred || (deterministic && !k.deterministic) || !k.supports(dev, p)) continue;
    if (Support why = k.preferred(dev, p)) {
      sel.kernel = &k;
      sel.reason = "preferred here: " + why.reason;
      return sel;
    } else {
      passed_over.push_back({k.name, "not preferred here: " + why.reason});
    }
  }
  for (const auto& k : table) {
    if (deterministic && !k.deterministic) {
      sel.rejected.push_back({k.name, "not deterministic (dQ is added with floating-point atomics)"});
      continue;
    }
    if (Support s = k.supports(dev, p); !s) {
      sel.rejected.push_back({k.name, s.reason});
      continue;
    }
    sel.kernel = &k;
    sel.reason = deterministic ? "deterministic backward asked for: a fixed dQ reduction order"
                               : "first backward kernel in the order of preference that supports the problem";
    sel.rejected.insert(sel.rejected.end(), passed_over.begin(), passed_over.end());
    return sel;
  }
  sel.reason = "no backward kernel supports the problem";
  return sel;
}

}  // namespace flashprobe::kernels
