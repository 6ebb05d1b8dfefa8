#pragma once
// ldmatrix.x4 (plain and .trans) at a 32-bit shared-memory address plus a compile-time byte offset
// that the instruction encodes as an immediate ([addr+offset]), and static_for to produce those
// offsets from unrolled loop counters. The layouts are those of SM75_U32x4_LDSM_N / SM75_U16x8_LDSM_T
// (flashprobe/atoms/sm75_ldmatrix.cuh, checked by ldsm_feeds_a / ldsm_feeds_b).
//
// Why: the mma kernel reads every fragment at (one base per tile) + (constant). Written as pointer
// arithmetic, the compiler hoisted each constant-offset address of the loop-invariant Q tile out of
// the key loop into a register of its own (16 at D = 128 with two m-tiles), which pushed kMT = 2 into
// spills. With the offset in the instruction there is one base register per tile.
//
//   std::uint32_t r[4];
//   static_for<4>([&](auto i) { ldsm_x4<false, decltype(i)::value * 32>(base, r); });
#include <cstdint>
#include <type_traits>
#include <utility>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/core/device.cuh"

namespace flashprobe::kernels::dev {

// f(std::integral_constant<int, 0>{}), ..., f(std::integral_constant<int, N - 1>{}), in order.
template <int N, class F>
FP_DEV void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

FP_DEV std::uint32_t smem_u32(const void* p) {
#if defined(FP_CAP_PTX)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

template <bool Trans, int kOffsetBytes>
FP_DEV void ldsm_x4(std::uint32_t addr, std::uint32_t (&r)[4]) {
  static_assert(kOffsetBytes >= 0 && kOffsetBytes % 16 == 0, "ldmatrix rows are 16-byte aligned");
#if defined(FP_CAP_LDMATRIX)
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4+%5];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr), "n"(kOffsetBytes));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4+%5];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr), "n"(kOffsetBytes));
#else
  (void)addr, (void)r;
  fp_dev::trap();
#endif
}

}  // namespace flashprobe::kernels::dev
