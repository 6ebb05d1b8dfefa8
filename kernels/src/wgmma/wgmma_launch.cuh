#pragma once
// Host launch of the wgmma kernel, shared by its translation units (one per group of tile classes:
// wgmma_launch.cu has 64/64, 128/128, 192/128 and the entry launch_wgmma, wgmma_launch_d<D>.cu one
// class each (96, 160, 192/192, 224, 256), so that CI's two cores build them side by side): one TMA tensor map per input (built
// per call: the pointers and strides are the call's), the block's dynamic shared memory raised past
// 48 KB, the grid. Compiled for sm_90a only (kernels/CMakeLists.txt): wgmma and the TMA exist nowhere else.
#include <cuda.h>

#include <climits>
#include <cstdint>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/wgmma/wgmma_attn.cuh"
#include "src/wgmma/wgmma_launchers.h"

namespace flashprobe::kernels::detail {



using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver the runtime already loaded (no libcuda link needed).
inline EncodeTiled encode_tiled() {
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

// A [batch, seq, heads, d] tensor as a 4-D map (d innermost), boxes of `chunk` dims x `rows` rows with
// the swizzle the wgmma descriptors expect (chunk 64: 128 bytes; 32: 64 bytes; WgmmaConfig::kChunk). d is the tensor's own head dim: the box
// columns past it (a head dim below the tile class) arrive as zeros and are never read. Strides of size-1 dimensions are never used
// for addressing; they get the packed value so that the driver's checks see a plain tensor.
inline CUtensorMap tensor_map(const char* what, const void* base, const DevStrides& st, int batch, int seq, int heads, int d,
                              int rows, int chunk, DType dt) {
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const std::int64_t packed[3] = {std::int64_t{d}, std::int64_t{d} * seq, std::int64_t{d} * seq * heads};
  const std::int64_t given[3] = {st.s, st.h, st.b};
  cuuint64_t strides[3];
  for (int i = 0; i < 3; ++i) strides[i] = static_cast<cuuint64_t>((dims[i + 1] == 1 ? packed[i] : given[i]) * 2);
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(chunk), static_cast<cuuint32_t>(rows), 1, 1};
  const cuuint32_t elem[4] = {1, 1, 1, 1};
  CUtensorMap m;
  const CUresult r = encode_tiled()(&m, dt == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                    4, const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    chunk == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw GpuError(std::string("cuTensorMapEncodeTiled(") + what + ": dims [" + std::to_string(batch) + ", " +
                       std::to_string(seq) + ", " + std::to_string(heads) + ", " + std::to_string(d) + "], strides s=" +
                       std::to_string(st.s) + " h=" + std::to_string(st.h) + " b=" + std::to_string(st.b) + " elements)",
                   static_cast<int>(r), "CUresult", __FILE__, __LINE__);
  return m;
}


// Blocks of the grid: one per SM for the persistent grid (a block takes a whole SM's shared
// memory), fewer where max_blocks caps it, one per item with full_grid (the walk then has one item per
// block, as without persistence); never more than there are items.
inline unsigned grid_blocks(std::int64_t items, const WgmmaOptions& o) {
  std::int64_t cap = INT32_MAX;
  if (o.max_blocks > 0) {
    cap = o.max_blocks;
  } else if (!o.full_grid) {
    static const int sms = [] {  // one device per process
      int dev = 0, n = 0;
      FP_CHECK(cudaGetDevice(&dev));
      FP_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
      return n;
    }();
    cap = sms;
  }
  return static_cast<unsigned>(items < cap ? items : cap);
}

template <class E, int D, int Dv, dev::WgmmaSchedule kSched, bool kExtras, bool kCarry = false, bool kL2Ahead = false,
          bool kVecO = false, bool kAffine = false, int kStagesWanted = 0, bool kAlign = false>
void launch(const Params& p, Stream s, const WgmmaOptions& o) {
  using C = dev::WgmmaConfig<D, Dv, kStagesWanted>;
  const CUtensorMap tq = tensor_map("q", p.q, p.qs, p.batch, p.sq, p.hq, p.d, C::kBm, C::kChunk, p.dtype);
  const CUtensorMap tk = tensor_map("k", p.k, p.ks, p.batch, p.sk, p.hkv, p.d, C::kBn, C::kChunk, p.dtype);
  const CUtensorMap tv = tensor_map("v", p.v, p.vs, p.batch, p.sk, p.hkv, p.dv, C::kBn, C::kChunk, p.dtype);
  auto* kernel = dev::wgmma_fwd<E, D, Dv, kSched, kExtras, kCarry, kL2Ahead, kVecO, kAffine, kStagesWanted, kAlign>;
  static const bool raised = [&] {  // once per instantiation
    FP_CHECK(fp_rt::set_max_dynamic_smem(kernel, C::kSmemBytes));
    return true;
  }();
  (void)raised;
  const dev::WgmmaWorkList wl = dev::work_list_of<D>(p.sq, p.hq, p.batch, p.causal != CausalMode::none);
  if (wl.items() == 0) return;  // sq = 0: nothing to write
  kernel<<<grid_blocks(wl.items(), o), C::kThreads, C::kSmemBytes, s>>>(p, tq, tk, tv);
  FP_CHECK_LAUNCH("wgmma_fwd");
}

// Only pingpong, the shipped schedule, is compiled unless the build asks for all of them.
template <class E, int D, int Dv, bool kExtras>
void by_schedule(const Params& p, Stream s, const WgmmaOptions& o) {
  if constexpr (kWgmmaAllSchedules) {
    if (o.schedule == dev::WgmmaSchedule::serial) return launch<E, D, Dv, dev::WgmmaSchedule::serial, kExtras>(p, s, o);
    if (o.schedule == dev::WgmmaSchedule::overlap) return launch<E, D, Dv, dev::WgmmaSchedule::overlap, kExtras>(p, s, o);
  }
  if (o.schedule != dev::WgmmaSchedule::pingpong)
    throw UsageError("wgmma: this build has the pingpong schedule only (configure with -DFLASHPROBE_WGMMA_SCHEDULES=ON)");
  // The shipped kernel at the 64/64 and 128/128 classes without soft-cap or ALiBi stores O in 16-byte
  // pieces (kVecO); the carried walk (wgmma/carry=on), the L2 prefetch (wgmma/l2ahead=on) and the
  // column-pair stores (wgmma/epilogue=pairs) are built there too, one at a time (their supports()
  // refuse the rest, wgmma_registry.cpp; variants.cpp refuses pairs of them), the first two with the
  // column pairs they were measured with; carry=on, measured slower, only with the other schedules.
  // Elsewhere (192/128, soft-cap or ALiBi) O goes out in column pairs; the 96/96, 160/160, 192/192, 224/224 and
  // 256/256 classes store 16-byte pieces without extras (the only stores they were built and measured with),
  // column pairs with them.
  // The mask (wgmma_mask.h) at 64/64 and 128/128 without extras: affine where the 32-bit rows hold
  // (sq + sk <= kMaxLen32), visible_range elsewhere and with wgmma/mask=visible, both with the 16-byte stores.
  // wgmma/stages=<n> (4 or 5 K/V stages instead of 3): the shipped 64/64 kernel otherwise, affine mask included.
  // The sector-aligned boxes (wgmma/align=sector) with the 16-byte stores at 64/64, 128/128 (and the
  // affine mask, as the shipped kernel; supports() refuses sq + sk past kMaxLen32 there), 160/160 and 256/256.
  const int picked =
      int{o.carry} + int{o.l2ahead} + int{o.pair_stores} + int{o.visible_mask} + int{o.stages > 0} + int{o.align_rows};
  // The 96/96, 160/160, 192/192, 224/224 and 256/256 classes without extras are built with the 16-byte stores only.
  constexpr bool kVecOnly = (D == 96 || D == 160 || (D == 192 && Dv == 192) || D == 224 || D == 256) && !kExtras;
  if constexpr ((D == 64 || D == 128 || D == 160 || D == 256) && !kExtras)
    if (o.align_rows && picked == 1) {
      constexpr bool kAffine = D == 64 || D == 128;
      if (kAffine && !dev::affine_mask_fits(p.sq, p.sk))
        throw UsageError("wgmma/align=sector: built with the affine mask at the 64/64 and 128/128 classes, which keeps sq + sk within " +
                         std::to_string(kMaxLen32) + " (sq=" + std::to_string(p.sq) + ", sk=" + std::to_string(p.sk) + ")");
      return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, false, true, kAffine, 0, true>(p, s, o);
    }
  if constexpr (kVecOnly)
    if (picked == 0) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, false, true>(p, s, o);
  if constexpr ((D == 64 || D == 128) && !kExtras) {
    if constexpr (kWgmmaAllSchedules)
      if (o.carry && picked == 1) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, true>(p, s, o);
    if (o.l2ahead && picked == 1) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, true>(p, s, o);
    if (o.pair_stores && picked == 1) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras>(p, s, o);
    const bool rows32 = dev::affine_mask_fits(p.sq, p.sk);
    if constexpr (D == 64) {
      if (o.stages == 4 && picked == 1 && rows32) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, false, true, true, 4>(p, s, o);
      if (o.stages == 5 && picked == 1 && rows32) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, false, true, true, 5>(p, s, o);
    }
    if ((o.visible_mask && picked == 1) || (picked == 0 && !rows32))
      return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, false, true>(p, s, o);
    if (picked == 0) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras, false, false, true, true>(p, s, o);
  }
  if (picked > 0)
    throw UsageError(std::string(picked > 1 ? "wgmma/carry=on, l2ahead=on, epilogue=pairs, mask=visible, stages and align=sector: not built together"
                                 : o.carry ? "wgmma/carry=on (built only with -DFLASHPROBE_WGMMA_SCHEDULES=ON)"
                                 : o.l2ahead ? "wgmma/l2ahead=on"
                                 : o.pair_stores ? "wgmma/epilogue=pairs"
                                 : o.visible_mask ? "wgmma/mask=visible"
                                                  : o.stages > 0 ? "wgmma/stages=" + std::to_string(o.stages) + " (64/64 only, sq + sk <= kMaxLen32)"
                                                 : std::string("wgmma/align=sector")) +
                     ": built for the " + (o.align_rows ? "64/64, 128/128, 160/160 and 256/256" : "64/64 and 128/128") +
                     " classes without soft-cap or ALiBi only (d=" +
                     std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ")");
  if constexpr (!kVecOnly) return launch<E, D, Dv, dev::WgmmaSchedule::pingpong, kExtras>(p, s, o);
}

// Soft-cap and ALiBi run in their own instantiation (wgmma_consumer.cuh says why).
template <class E, int D, int Dv>
void by_extras(const Params& p, Stream s, const WgmmaOptions& o) {
  if (p.softcap > 0.f || p.alibi != nullptr) by_schedule<E, D, Dv, true>(p, s, o);
  else by_schedule<E, D, Dv, false>(p, s, o);
}
template <int D, int Dv>
void by_dtype(const Params& p, Stream s, const WgmmaOptions& o) {
  if (p.dtype == DType::bf16) by_extras<dev::BF16, D, Dv>(p, s, o);
  else by_extras<dev::F16, D, Dv>(p, s, o);
}


// The launch of tile class D/Dv (Q/K and V/O widths; kWgmmaFineDimClasses), defined by one explicit
// specialisation in the translation unit that builds the class (wgmma_launch.cu, wgmma_launch_d<D>.cu).
template <int D, int Dv>
void launch_wgmma_class(const Params& p, Stream s, const WgmmaOptions& o);

}  // namespace flashprobe::kernels::detail
