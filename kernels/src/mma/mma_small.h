#pragma once
// The variants of mma for the small head dims (kernels/src/mma/PERF_NOTES.md, "Small head dims: the
// rule, its ceiling"): problems whose (d, dv) fall in the smallest tile class below its width
// (d, dv <= 64, not 64/64; no soft-cap or ALiBi) run one more class-64 instantiation instead of the
// soft-cap/ALiBi one (the general instantiation) that mma runs them in:
//   plain (mma/small=plain): run-time d and dv without soft-cap/ALiBi code; every exp2 on the MUFU.
//   fma   (mma/small=fma): the same, with kMmaSmallFmaTiles of every kNT = 8 score tiles of a lane
//         (8 keys each) exponentiated on the FMA units (exp2_fma.h), the rest on the MUFU.
//   c32   (mma/small=c32): d, dv <= 32 in a 32-wide class (half the O accumulators and K/V copies
//         of class 64, so fewer registers per thread), the rest of plain's problems as plain. The
//         32 class is mma's own since it measured faster (kMmaFineDimClasses), so c32 differs from
//         mma only at d = 40..56 (plain's code there).
//   occ   (mma/small=occ): the same code as mma's at d, dv <= 32 (class 32) and as plain's at
//         d = 40..56 (class 64), each with a floor of resident blocks per SM in its launch bounds
//         (mma_small_occ_blocks): more warps per SM for a softmax chain that is latency-bound there
//         (PERF_NOTES.md, "Small head dims: the count"), at the price of ptxas's spills. Measured
//         0.96-1.03x mma (H100, reports/data/h100-80gb-hbm3/2026-11-27-headdim-smalld-06a5a85):
//         refuted, kept for comparison.
// Every other problem runs mma's code. Host code and the kernel's launcher (pure constexpr).
#include "flashprobe/kernels/head_dim_classes.h"

namespace flashprobe::kernels::dev {

enum class MmaSmall : int { off = 0, plain = 1, fma = 2, c32 = 3, occ = 4 };

// The split, a compile-time knob (each value is an instantiation): 1 of 8 score tiles = 1/8 of the
// row's exponentials. Counted in PERF_NOTES.md: with ~5 issue slots per score besides the exp and
// 11 per exp2_fma, a warp's softmax phase is shortest (MUFU and issue balanced) near 1/6 to 1/9.
inline constexpr int kMmaSmallFmaTiles = 1;
// The class the variants act in: the first of kMmaDimClasses (64).
inline constexpr int kMmaSmallClass = kMmaDimClasses[0].d;

// Whether mma/small=... runs (d, dv) in its own instantiation (else in mma's).
constexpr bool mma_small_takes(int d, int dv, bool extras) {
  return !extras && head_dim_class(kMmaDimClasses, d, dv) == HeadDimClass{kMmaSmallClass, kMmaSmallClass} &&
         !(d == kMmaSmallClass && dv == kMmaSmallClass);
}

// mma/small=c32's narrow class and the problems it takes (a subset of mma_small_takes').
inline constexpr int kMmaSmallNarrowClass = 32;
constexpr bool mma_small_narrow_takes(int d, int dv, bool extras) {
  return mma_small_takes(d, dv, extras) && d <= kMmaSmallNarrowClass && dv <= kMmaSmallNarrowClass;
}

// mma/small=occ's floor of resident blocks (of kMmaWaves = 4 warps) per SM, a tile class's: 4 at class
// 32 (its 168 registers give 3; the cap of 128 spills 88 / 80 bytes, sm_90, CUDA 13.0) and 3 at class
// 64's run-time-tail instantiation for d = 40..56 (its 220 registers give 2; the cap of 168 spills
// 36 / 48 bytes). 0: not built for that class.
constexpr int mma_small_occ_blocks(int cls) { return cls == kMmaSmallNarrowClass ? 4 : cls == kMmaSmallClass ? 3 : 0; }

}  // namespace flashprobe::kernels::dev
