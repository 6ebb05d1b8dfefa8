// The production instantiation of decode (Bug::none); mutants instantiate it in kernels/mutants/.
// Also decode/combine=wide|pdl (variants.h), whose split kernel is this one, and decode/mma=on's
// launcher (its tensor-core split kernel is decode_mma.cu's, in the CUDA tree).
#include "src/decode.cuh"
#include "src/decode_combine.cuh"
#include "src/launchers.h"

namespace flashprobe::kernels::detail {
template void launch_decode<Bug::none>(const Params&, int, void*, Stream);

namespace {
// Whether this process's device runs programmatic dependent launches (sm_90 and later). Asked once:
// one device per process.
bool device_has_pdl() {
#if defined(FP_VENDOR_CUDA)
  static const bool has = [] {
    int dev = 0, major = 0;
    return fp_rt::get_device(&dev) == fp_rt::kSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
  }();
  return has;
#else
  return false;
#endif
}
}  // namespace

void launch_decode_mma(const Params& p, int splits, void* workspace, Stream s) {
  const auto ws = dev::decode_workspace(p, splits, workspace);
  const bool transform = p.softcap > 0.f || p.alibi != nullptr;
  // Whether the tensor-core kernel runs depends on the problem's shape only, never on its strides or
  // alignment: a strided batch and a contiguous element must take the same kernel (BatchInvariant).
  [[maybe_unused]] const bool mma = decode_mma_takes(p.d, p.dv, p.group, p.sq, transform);
#if defined(FP_VENDOR_CUDA)
  if (mma) {
    launch_decode_mma_split(p, splits, decode_chunk(p.sk, splits, kDecodeMmaKeysPerTile), ws.o, ws.lse, s);
    FP_CHECK_LAUNCH("decode_split_mma");
  } else
#endif
  {
    const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group, p.sq, transform);
    const int chunk = decode_chunk(p.sk, splits, g.keys_per_step);
    if (p.dtype == DType::bf16) dev::launch_split<dev::BF16, Bug::none>(p, g, splits, chunk, ws, s);
    else dev::launch_split<dev::F16, Bug::none>(p, g, splits, chunk, ws, s);
    FP_CHECK_LAUNCH("decode_split");
  }
  // The two combines give bitwise the same output (DecodeCombine); the wide one's loads are issued at
  // once, which paid where there are many splits (GQA at 43-49 splits: 1.5-2 us,
  // 2026-11-27-decode-plan-708f029) and not at 8-16 (0.977-1.000x).
  const auto rows = static_cast<unsigned>(p.batch * p.hq * p.sq);
  if (splits > 16) dev::decode_combine_wide<<<rows, dev::kCombineThreads, 0, s>>>(p, splits, ws);
  else dev::decode_combine<Bug::none><<<rows, dev::kCombineThreads, 0, s>>>(p, splits, ws);
  FP_CHECK_LAUNCH("decode_combine");
}

void launch_decode_combined(const Params& p, int splits, DecodeCombine c, int depth, void* workspace, Stream s) {
  if (c == DecodeCombine::loop && depth == 2) {
    launch_decode<Bug::none>(p, splits, workspace, s);
    return;
  }
  const auto ws = dev::decode_workspace(p, splits, workspace);
  const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group, p.sq, p.softcap > 0.f || p.alibi != nullptr);
  const int chunk = decode_chunk(p.sk, splits, g.keys_per_step);
  if (depth == 3) {
    if (p.dtype == DType::bf16) dev::launch_split_deep<dev::BF16>(p, g, splits, chunk, ws, s);
    else dev::launch_split_deep<dev::F16>(p, g, splits, chunk, ws, s);
  } else {
    if (p.dtype == DType::bf16) dev::launch_split<dev::BF16, Bug::none>(p, g, splits, chunk, ws, s);
    else dev::launch_split<dev::F16, Bug::none>(p, g, splits, chunk, ws, s);
  }
  FP_CHECK_LAUNCH("decode_split");
  const auto rows = static_cast<unsigned>(p.batch * p.hq * p.sq);
  if (c == DecodeCombine::loop) {
    dev::decode_combine<Bug::none><<<rows, dev::kCombineThreads, 0, s>>>(p, splits, ws);
    FP_CHECK_LAUNCH("decode_combine");
    return;
  }
#if defined(FP_VENDOR_CUDA)
  if (c == DecodeCombine::pdl && device_has_pdl()) {
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(rows);
    cfg.blockDim = dim3(dev::kCombineThreads);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    FP_CHECK(cudaLaunchKernelEx(&cfg, dev::decode_combine_wide, p, splits, ws));
    FP_CHECK_LAUNCH("decode_combine_wide (programmatic dependent)");
    return;
  }
#endif
  dev::decode_combine_wide<<<rows, dev::kCombineThreads, 0, s>>>(p, splits, ws);
  FP_CHECK_LAUNCH("decode_combine_wide");
}
}  // namespace flashprobe::kernels::detail
