#pragma once
// The Hopper (sm_90) asynchronous-copy primitives the wgmma kernel uses, as thin PTX wrappers:
// transaction-counting mbarriers in shared memory and cp.async.bulk.tensor (TMA) tile loads.
//   mbar_init(bar, n)          a barrier completing a phase after n arrivals (plus the bytes promised)
//   mbar_expect_tx(bar, bytes) one arrival that also promises `bytes` of TMA traffic for this phase
//   tma_load_4d(dst, map, bar, c0..c3)  box at coordinates (c0 innermost) -> dst; completes on bar
//   tma_prefetch_l2_4d(map, c0..c3)      the same box into the L2 only (a hint: nothing to wait for)
//   mbar_arrive(bar)           one plain arrival
//   mbar_wait(bar, parity)     spin until the phase with this parity has completed (fault after 10 s)
// Phases alternate parity 0, 1, 0, ...: the n-th use of a barrier waits for parity n & 1.
// Compiled for anything below sm_90 the bodies are empty and the kernel that calls them traps first.
#include <cstdint>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/core/device.cuh"
#include "src/wgmma/wgmma_config.h"  // desc_words_swizzled
#if defined(FP_VENDOR_CUDA)
#include <cuda.h>  // CUtensorMap (a 128-byte opaque descriptor; no driver library is linked)
#endif


namespace flashprobe::kernels::dev::sm90 {

FP_DEV std::uint32_t smem_u32(const void* p) {
#if defined(FP_CAP_SM90)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

FP_DEV void mbar_init(std::uint64_t* bar, int count) {
#if defined(FP_CAP_SM90)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
#else
  (void)bar, (void)count;
#endif
}

// Makes the initialised barriers visible to the async proxy (the TMA unit) before first use.
FP_DEV void mbar_fence_init() {
#if defined(FP_CAP_SM90)
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

FP_DEV void mbar_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if defined(FP_CAP_SM90)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
#else
  (void)bar, (void)bytes;
#endif
}

FP_DEV void mbar_arrive(std::uint64_t* bar) {
#if defined(FP_CAP_SM90)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
#else
  (void)bar;
#endif
}

// One hardware-bounded wait (try_wait suspends the thread for a while): whether the phase completed.
FP_DEV bool mbar_try(std::uint64_t* bar, int parity) {
#if defined(FP_CAP_SM90)
  std::uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return done != 0;
#else
  (void)bar, (void)parity;
  return true;
#endif
}

// Waits for the phase; a phase that has not completed after 10 s of wall time means a protocol bug
// (a load never issued, an arrival missing): fault, so the launch fails with an error instead of
// hanging the GPU. Not with a trap instruction: ptxas compiles every region that can reach a trap
// for the kernel's entry register count, which undoes setmaxnreg (sm90_roles.cuh) in the consumers
// (168 instead of 240 registers: spills, and serialised wgmma). A store to an unmapped address
// fails the launch (cudaErrorIllegalAddress) without that cost.
FP_DEV void mbar_wait(std::uint64_t* bar, int parity) {
#if defined(FP_CAP_SM90)
  if (mbar_try(bar, parity)) return;
  std::uint64_t t0, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (!mbar_try(bar, parity)) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - t0 > 10'000'000'000ull) *reinterpret_cast<volatile int*>(std::uintptr_t{16}) = 1;
  }
#else
  (void)bar, (void)parity;
#endif
}

#if defined(FP_VENDOR_CUDA)
FP_DEV void tma_prefetch_map(const CUtensorMap* map) {
#if defined(FP_CAP_SM90)
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#else
  (void)map;
#endif
}

// One box of a 4-D tensor map into shared memory; out-of-range elements arrive as zeros and still
// count toward the barrier's bytes.
FP_DEV void tma_load_4d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2, int c3) {
#if defined(FP_CAP_SM90)
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32(bar))
      : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3;
#endif
}

// The box tma_load_4d would read, brought into the L2 and nowhere else: no shared memory, no barrier,
// no completion to wait for (a hint the hardware may drop; a later load of the box is correct either
// way). The box may cross the tensor's end, as a load's may.
FP_DEV void tma_prefetch_l2_4d(const CUtensorMap* map, int c0, int c1, int c2, int c3) {
#if defined(FP_CAP_SM90)
  asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
#else
  (void)map, (void)c0, (void)c1, (void)c2, (void)c3;
#endif
}
#endif

// wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address, LBO
// and SBO in 16-byte units (bits 0-13, 16-29, 32-45), base offset 0 (tiles are 1024-byte aligned),
// layout type in bits 62-63 (1 = 128-byte swizzle, the pattern TMA writes with SWIZZLE_128B; 2 =
// 64-byte, SWIZZLE_64B).
// Kept as two words: the kernel moves a descriptor along a tile by adding 16-byte units to the low
// word (start address), which stays one 32-bit add instead of a 64-bit value per k-step and stage.
struct DescSw {
  std::uint32_t lo, hi;
  FP_DEV std::uint64_t at(std::uint32_t offset_bytes) const {
    return (static_cast<std::uint64_t>(hi) << 32) | (lo + (offset_bytes >> 4));
  }
};
// kSwizzleBytes: 128 or 64, a tile class's WgmmaConfig::kRowBytes.
template <int kSwizzleBytes>
FP_DEV DescSw desc_sw(const void* start, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes) {
  const DescWords w = desc_words_swizzled(smem_u32(start), lbo_bytes, sbo_bytes, kSwizzleBytes);
  return {w.lo, w.hi};
}

}  // namespace flashprobe::kernels::dev::sm90
