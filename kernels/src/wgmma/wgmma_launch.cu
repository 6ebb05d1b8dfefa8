// Host launch of the wgmma kernel: one TMA tensor map per input (built per call: the pointers and
// strides are the call's), the block's dynamic shared memory raised past 48 KB, the grid.
// Compiled for sm_90a only (kernels/CMakeLists.txt): wgmma and the TMA exist nowhere else.
#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/mma/mma_launchers.h"
#include "src/wgmma/wgmma_attn.cuh"
#include "src/wgmma/wgmma_launchers.h"

namespace flashprobe::kernels::detail {
namespace {

using dev::WgmmaSchedule;

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver the runtime already loaded (no libcuda link needed).
EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    FP_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (f == nullptr || q != cudaDriverEntryPointSuccess)
      throw GpuError("cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)", static_cast<int>(q),
                     "no such driver entry point (a CUDA 12+ driver is needed for the TMA)", __FILE__, __LINE__);
    return reinterpret_cast<EncodeTiled>(f);
  }();
  return fn;
}

// A [batch, seq, heads, d] tensor as a 4-D map (d innermost), boxes of 64 dims x `rows` rows with
// the 128-byte swizzle the wgmma descriptors expect. Strides of size-1 dimensions are never used
// for addressing; they get the packed value so that the driver's checks see a plain tensor.
CUtensorMap tensor_map(const char* what, const void* base, const DevStrides& st, int batch, int seq, int heads, int d,
                       int rows, DType dt) {
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const std::int64_t packed[3] = {std::int64_t{d}, std::int64_t{d} * seq, std::int64_t{d} * seq * heads};
  const std::int64_t given[3] = {st.s, st.h, st.b};
  cuuint64_t strides[3];
  for (int i = 0; i < 3; ++i) strides[i] = static_cast<cuuint64_t>((dims[i + 1] == 1 ? packed[i] : given[i]) * 2);
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(rows), 1, 1};
  const cuuint32_t elem[4] = {1, 1, 1, 1};
  CUtensorMap m;
  const CUresult r = encode_tiled()(&m, dt == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                    4, const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw GpuError(std::string("cuTensorMapEncodeTiled(") + what + ": dims [" + std::to_string(batch) + ", " +
                       std::to_string(seq) + ", " + std::to_string(heads) + ", " + std::to_string(d) + "], strides s=" +
                       std::to_string(st.s) + " h=" + std::to_string(st.h) + " b=" + std::to_string(st.b) + " elements)",
                   static_cast<int>(r), "CUresult", __FILE__, __LINE__);
  return m;
}

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15) == 0; }

// The consumers' schedule (wgmma_config.h): pingpong unless FLASHPROBE_WGMMA_SCHEDULE names another,
// a measurement knob for timing the schedules against each other in one run (WGMMA_NOTES.md).
WgmmaSchedule schedule() {
  static const WgmmaSchedule s = [] {
    const char* v = std::getenv("FLASHPROBE_WGMMA_SCHEDULE");
    const std::string name = v ? v : "";
    if (name.empty() || name == "pingpong") return WgmmaSchedule::pingpong;
    if (name == "overlap") return WgmmaSchedule::overlap;
    if (name == "serial") return WgmmaSchedule::serial;
    throw UsageError("FLASHPROBE_WGMMA_SCHEDULE=" + name + ": allowed values are serial, overlap, pingpong");
  }();
  return s;
}

// Blocks of the persistent grid: one per SM (a block takes a whole SM's shared memory), and never
// more than there are items. FLASHPROBE_WGMMA_GRID=full, a measurement knob, launches one block per
// item instead (the walk then has one item per block, as without persistence).
unsigned grid_blocks(std::int64_t items, int max_blocks) {
  if (max_blocks > 0) return static_cast<unsigned>(items < max_blocks ? items : max_blocks);
  static const std::int64_t cap = [] {
    const char* v = std::getenv("FLASHPROBE_WGMMA_GRID");
    const std::string name = v ? v : "";
    if (name == "full") return std::int64_t{INT32_MAX};
    if (!name.empty() && name != "persistent")
      throw UsageError("FLASHPROBE_WGMMA_GRID=" + name + ": allowed values are persistent, full");
    int dev = 0, sms = 0;
    FP_CHECK(cudaGetDevice(&dev));
    FP_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return std::int64_t{sms};
  }();
  return static_cast<unsigned>(items < cap ? items : cap);
}

template <class E, int D, WgmmaSchedule kSched, bool kExtras>
void launch(const Params& p, Stream s, int max_blocks) {
  using C = dev::WgmmaConfig<D>;
  const CUtensorMap tq = tensor_map("q", p.q, p.qs, p.batch, p.sq, p.hq, D, C::kBm, p.dtype);
  const CUtensorMap tk = tensor_map("k", p.k, p.ks, p.batch, p.sk, p.hkv, D, C::kBn, p.dtype);
  const CUtensorMap tv = tensor_map("v", p.v, p.vs, p.batch, p.sk, p.hkv, D, C::kBn, p.dtype);
  auto* kernel = dev::wgmma_fwd<E, D, kSched, kExtras>;
  static const bool raised = [&] {  // once per instantiation
    FP_CHECK(fp_rt::set_max_dynamic_smem(kernel, C::kSmemBytes));
    return true;
  }();
  (void)raised;
  const dev::WgmmaWorkList wl = dev::work_list_of<D>(p.sq, p.hq, p.batch, p.causal != CausalMode::none);
  if (wl.items() == 0) return;  // sq = 0: nothing to write
  kernel<<<grid_blocks(wl.items(), max_blocks), C::kThreads, C::kSmemBytes, s>>>(p, tq, tk, tv);
  FP_CHECK_LAUNCH("wgmma_fwd");
}

template <class E, int D, bool kExtras>
void by_schedule(const Params& p, Stream s, int max_blocks) {
  switch (schedule()) {
    case WgmmaSchedule::serial: return launch<E, D, WgmmaSchedule::serial, kExtras>(p, s, max_blocks);
    case WgmmaSchedule::overlap: return launch<E, D, WgmmaSchedule::overlap, kExtras>(p, s, max_blocks);
    case WgmmaSchedule::pingpong: return launch<E, D, WgmmaSchedule::pingpong, kExtras>(p, s, max_blocks);
  }
}

// Soft-cap and ALiBi run in their own instantiation (wgmma_consumer.cuh says why).
template <class E, int D>
void by_extras(const Params& p, Stream s, int max_blocks) {
  if (p.softcap > 0.f || p.alibi != nullptr) by_schedule<E, D, true>(p, s, max_blocks);
  else by_schedule<E, D, false>(p, s, max_blocks);
}

template <int D>
void by_dtype(const Params& p, Stream s, int max_blocks) {
  if (p.dtype == DType::bf16) by_extras<dev::BF16, D>(p, s, max_blocks);
  else by_extras<dev::F16, D>(p, s, max_blocks);
}

}  // namespace

void launch_wgmma(const Params& p, Stream s, int max_blocks) {
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v)) {
    // TMA reads from 16-byte aligned bases only; mma takes any pointer (documented in the header).
    if (p.d == 64) return launch_mma_nvidia<64>(p, s);
    return launch_mma_nvidia<128>(p, s);
  }
  switch (p.d) {
    case 64: return by_dtype<64>(p, s, max_blocks);
    case 128: return by_dtype<128>(p, s, max_blocks);
  }
  throw UsageError("d=" + std::to_string(p.d) + ": wgmma is built for d in {64, 128}");
}

}  // namespace flashprobe::kernels::detail
