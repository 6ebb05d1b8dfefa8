#pragma once
// Warp specialisation on Hopper (sm_90a): the primitives that let one warpgroup of a block produce
// (issue TMA loads) while the others consume (wgmma and softmax), as thin PTX wrappers.
//   regs_dec<N>() / regs_inc<N>()  setmaxnreg: the executing warpgroup gives registers back to the
//                                  block's pool or takes them from it (N per thread, a multiple of 8
//                                  in [24, 256]); every warp of the warpgroup executes the same one.
//   named_sync(id, n) / named_arrive(id, n)  barrier `id` (1..15; 0 is __syncthreads) completing
//                                  after n threads arrived; arrive does not wait.
// Why: a block of one producer and two consumer warpgroups (384 threads) that asks for one block per
// SM gets 65536 / 384 rounded down to 168 registers per thread, too few for a consumer's
// accumulators. Registers move only inside the block's own allocation (168 x 384 = 64512): with the
// producer down to 24 the consumers can hold 240, 128 x 24 + 256 x 240 = 64512; asking for more
// than was freed makes setmaxnreg.inc wait forever. The compiler honours setmaxnreg only when the
// kernel has a register cap at entry (__launch_bounds__(threads, 1)) and each role is one branch of
// an if/else; otherwise it warns (C7508) and the counts stay as they were. It also compiles every
// region that can reach a trap for the entry count (sm90_tma.cuh, mbar_wait, says what to do instead).
#include "flashprobe/atoms/caps.h"  // FP_CAP_SM90A
#include "flashprobe/core/device.cuh"

namespace flashprobe::kernels::dev::sm90 {

template <int N>
FP_DEV void regs_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
#if defined(FP_CAP_SM90A)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

template <int N>
FP_DEV void regs_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
#if defined(FP_CAP_SM90A)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

FP_DEV void named_sync(int id, int n) {
#if defined(FP_CAP_SM90A)
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
#else
  (void)id, (void)n;
#endif
}

FP_DEV void named_arrive(int id, int n) {
#if defined(FP_CAP_SM90A)
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
#else
  (void)id, (void)n;
#endif
}

}  // namespace flashprobe::kernels::dev::sm90
