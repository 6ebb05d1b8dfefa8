// The mutant table: each catalogue entry bound to its kernel variant's launcher. supports() is the
// production kernel's, narrowed where the mutant is instantiated for fewer shapes.
#include "flashprobe/kernels/mutants.h"

#include "flashprobe/core/error.h"
#include "src/bwd_params.h"
#include "src/launchers.h"
#include "src/mma/mma_bwd_launchers.h"

namespace flashprobe::kernels {
namespace {

using LaunchFn = void (*)(const Params&, void*, Stream);

#ifdef FP_HAVE_GPU_RUNTIME
template <Bug bug>
void ref_mutant(const Params& p, void* ws, Stream s) { detail::launch_ref3pass<bug>(p, ws, s); }
template <Bug bug>
void tiled_mutant(const Params& p, void*, Stream s) { detail::launch_tiled<bug, kMutantTiledDim>(p, s); }
template <Bug bug>
void decode_mutant_splits(const Params& p, int splits, void* ws, Stream s) { detail::launch_decode<bug>(p, splits, ws, s); }

LaunchFn launcher(Bug b) {
  switch (b) {
    case Bug::softmax_block_not_pow2: return ref_mutant<Bug::softmax_block_not_pow2>;
    case Bug::bf16_truncate: return ref_mutant<Bug::bf16_truncate>;
    case Bug::causal_top_left: return tiled_mutant<Bug::causal_top_left>;
    case Bug::varlen_diag_global: return tiled_mutant<Bug::varlen_diag_global>;
    case Bug::gqa_mod: return tiled_mutant<Bug::gqa_mod>;
    case Bug::tail_unmasked: return tiled_mutant<Bug::tail_unmasked>;
    case Bug::masked_row_nan: return tiled_mutant<Bug::masked_row_nan>;
    case Bug::missing_barrier: return tiled_mutant<Bug::missing_barrier>;
    case Bug::lse_scale_twice: return tiled_mutant<Bug::lse_scale_twice>;
    case Bug::rowsum_f16: return tiled_mutant<Bug::rowsum_f16>;
    case Bug::o_accum_f16: return tiled_mutant<Bug::o_accum_f16>;
    case Bug::v_reads_k_strides: return tiled_mutant<Bug::v_reads_k_strides>;
    case Bug::offset_32bit: return tiled_mutant<Bug::offset_32bit>;
    default: return nullptr;  // decode mutants take a split count: see decode_launcher
  }
}
using DecodeFn = void (*)(const Params&, int, void*, Stream);
DecodeFn decode_launcher(Bug b) {
  switch (b) {
    case Bug::kv_offset_ignored: return decode_mutant_splits<Bug::kv_offset_ignored>;
    case Bug::combine_skips_empty: return decode_mutant_splits<Bug::combine_skips_empty>;
    case Bug::split_odd_dropped: return decode_mutant_splits<Bug::split_odd_dropped>;
    default: return nullptr;
  }
}
#endif

Mutant make(const MutantMeta& m) {
  const KernelInfo* base = find_kernel(m.kernel);
  if (!base) throw std::logic_error("mutant " + m.name + " names unknown kernel " + m.kernel);
  KernelInfo k = *base;
  k.name = "mutant/" + m.name;
  k.description = m.description;
  if (m.kernel == "tiled") {
    auto base_supports = base->supports;
    k.supports = [base_supports](const DeviceInfo& dev, const AttnProblem& p) {
      if (p.d != kMutantTiledDim)
        return Support::no("d=" + std::to_string(p.d) + ": tiled mutants are built for d=" + std::to_string(kMutantTiledDim) + " only");
      return base_supports(dev, p);
    };
  }
  const Bug bug = m.bug;
  const std::string kernel = m.kernel;
  // forced > 0: a decode mutant with exactly that many key splits (with_splits); 0: the default count.
  auto launch_with = [bug, kernel, name = k.name](int forced) {
    return [bug, kernel, name, forced](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
      (void)name;
      const Params prm = make_params(p, t);
      if (kernel == "decode") decode_launcher(bug)(prm, forced > 0 ? forced : decode_default_splits(p), ws, s);
      else launcher(bug)(prm, ws, s);
#else
      (void)bug, (void)kernel, (void)forced, (void)p, (void)t, (void)ws, (void)s;
      throw NoDevice("no GPU device: this build has no GPU backend, " + name + " cannot launch");
#endif
    };
  };
  k.launch = launch_with(0);
  // The production kernel's forced-split variants are not this mutant's: a decode mutant forces its
  // own split counts, every other mutant has none.
  k.with_splits = {};
  if (kernel == "decode") {
    k.with_splits = [k, launch_with](int n) {
      if (n < 1) throw UsageError("decode splits=" + std::to_string(n) + " is not allowed: use >= 1");
      KernelInfo f = k;
      f.name = k.name + "/splits=" + std::to_string(n);
      f.workspace_bytes = [n](const AttnProblem& p) { return detail::decode_workspace_bytes(p, n); };
      f.launch = launch_with(n);
      f.with_splits = {};
      return f;
    };
  }
  return {m, std::move(k)};
}


#ifdef FP_HAVE_GPU_RUNTIME
using BwdFn = void (*)(const BwdParams&, bool, Stream);
BwdFn backward_launcher(Bug b) {
  switch (b) {
    case Bug::bwd_no_rowsum_d: return detail::launch_backward<Bug::bwd_no_rowsum_d>;
    case Bug::bwd_gqa_unsummed: return detail::launch_backward<Bug::bwd_gqa_unsummed>;
    case Bug::bwd_softcap_grad_missing: return detail::launch_backward<Bug::bwd_softcap_grad_missing>;
    case Bug::bwd_causal_missing: return detail::launch_backward<Bug::bwd_causal_missing>;
    case Bug::bwd_dq_race: return detail::launch_backward<Bug::bwd_dq_race>;
#if !defined(FP_VENDOR_HIP)
    case Bug::bwd_mma_no_rowsum_d: return detail::launch_mma_bwd_nvidia<detail::kMutantMmaBwdDim, Bug::bwd_mma_no_rowsum_d>;
    case Bug::bwd_mma_gqa_unsummed: return detail::launch_mma_bwd_nvidia<detail::kMutantMmaBwdDim, Bug::bwd_mma_gqa_unsummed>;
    case Bug::bwd_mma_softcap_grad_missing:
      return detail::launch_mma_bwd_nvidia<detail::kMutantMmaBwdDim, Bug::bwd_mma_softcap_grad_missing>;
    case Bug::bwd_mma_causal_missing: return detail::launch_mma_bwd_nvidia<detail::kMutantMmaBwdDim, Bug::bwd_mma_causal_missing>;
#endif
    default: return nullptr;
  }
}
#endif

BackwardMutant make_backward(const MutantMeta& m) {
  const BackwardKernelInfo* base = find_backward_kernel(m.kernel);
  if (!base) throw std::logic_error("mutant " + m.name + " names unknown backward kernel " + m.kernel);
  BackwardKernelInfo k = *base;
  k.name = "mutant/" + m.name;
  k.description = m.description;
  const bool det = base->deterministic;
  if (m.kernel == "mma_bwd") {
    auto base_supports = base->supports;
    k.supports = [base_supports](const DeviceInfo& dev, const AttnProblem& p) {
      if (p.d != detail::kMutantMmaBwdDim)
        return Support::no("d=" + std::to_string(p.d) + ": mma_bwd mutants are built for d=" +
                           std::to_string(detail::kMutantMmaBwdDim) + " only");
      return base_supports(dev, p);
    };
  }
  k.launch = [bug = m.bug, det, name = k.name](const AttnProblem& p, const BwdDeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
    (void)name;
    backward_launcher(bug)(make_bwd_params(p, t, ws, det), det, s);
#else
    (void)bug, (void)det, (void)p, (void)t, (void)ws, (void)s;
    throw NoDevice("no GPU device: this build has no GPU backend, " + name + " cannot launch");
#endif
  };
  return {m, std::move(k)};
}

}  // namespace

const std::vector<Mutant>& mutants() {
  static const std::vector<Mutant> table = [] {
    std::vector<Mutant> v;
    for (auto& m : mutant_catalogue())
      if (!find_backward_kernel(m.kernel)) v.push_back(make(m));
    return v;
  }();
  return table;
}

const std::vector<BackwardMutant>& backward_mutants() {
  static const std::vector<BackwardMutant> table = [] {
    std::vector<BackwardMutant> v;
    for (auto& m : mutant_catalogue())
      if (find_backward_kernel(m.kernel)) v.push_back(make_backward(m));
    return v;
  }();
  return table;
}

}  // namespace flashprobe::kernels
