#pragma once
// 2^x on the FMA units (FlashAttention-4's softmax trick): the mma kernel can compute part of a
// row's exponentials here instead of on the MUFU (ex2.approx.ftz: 16 results per clock and SM on
// sm_80/sm_90, against 128 FP32 FMAs), the variant mma/small=fma (kernels/src/mma/PERF_NOTES.md,
// "Small head dims: the rule, its ceiling").
// Host and device code, one definition: test_exp2_fma runs this function on the CPU over every float
// x in [-1, 0] (every reduced argument the kernel can meet) and checks the scaling for every exponent;
// the device computes the same bits (IEEE round-to-nearest FADD/FFMA, no contraction: every product
// is an explicit fmaf), except that the last multiply flushes subnormals, which the host copy does too.
//
//   x <= -127 (and -inf): 0.  Else n = rint(x) (the 1.5 * 2^23 trick: FADD, FADD), f = x - n in
//   [-0.5, 0.5] (exact), p(f) = 1 + c1 f + ... + c5 f^5 (Horner, 5 FFMA), and 2^x = p(f) * 2^n with
//   2^n built in the exponent field (one integer shift-add) and a flushing multiply (FMUL.FTZ): a
//   result below 2^-126 is 0, as ex2.approx.ftz gives. About 11 instructions on the FMA/ALU pipes.
//
// Accuracy (what P needs, derived in PERF_NOTES.md): the kernel rounds P to f16/bf16 for P V, but
// the row sum l adds the unrounded P, and the oracle bounds the LSE = m + ln(l) to
// 64 * 2^-23 * max(1, |LSE|) (oracle/check.h's lse_floor): a relative error d of every P moves the
// LSE by at most d, so d must stay far below 2^-17; O's own allowance (eps of the 16-bit type) is
// 2^-10 or looser. The coefficients: a minimax (Remez) fit of the relative error on [-0.5, 0.5],
// c0 = 1 fixed (so that P at the row max, x = 0, is exactly 1, as with ex2.approx), rounded to float
// and then moved by a few float ulps each to minimise the error of the float evaluation. Measured over
// every float x in [-1, 0] (test_exp2_fma): relative error at most 2^-22.47 (2.4 ulp of the correctly
// rounded 2^x), under kExp2FmaMaxRelError = 2^-22 (MUFU's class: fast_math.cuh assumes 2 ulp for
// ex2.approx) and 2^5 below what the LSE allows. Degree 4 in double precision is 2^-18.6 (a tenth of
// the LSE's allowance: too close), and these five coefficients without the last 2^-14.1 (the test
// fails either way); FA4's degree 3 for bf16 P is about 2^-11 (the LSE check would fail).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define FP_EXP2_FMA_FN __host__ __device__ __forceinline__
#else
#define FP_EXP2_FMA_FN inline
#endif

namespace flashprobe::kernels::dev {

inline constexpr int kExp2FmaDegree = 5;
// The bound test_exp2_fma checks (relative to the exact 2^x, every float x in [-1, 0]).
inline constexpr double kExp2FmaMaxRelError = 0x1p-22;

namespace exp2_fma_detail {
inline constexpr float kRound = 12582912.f;  // 1.5 * 2^23: x + kRound rounds x to an integer
inline constexpr float kC1 = 0x1.62e428p-1f, kC2 = 0x1.ebf958p-3f, kC3 = 0x1.c6b806p-5f, kC4 = 0x1.3d0cf2p-7f,
                       kC5 = 0x1.5c08e6p-10f;

FP_EXP2_FMA_FN std::uint32_t bits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}
FP_EXP2_FMA_FN float from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}
// a * b with a subnormal result flushed to +0 (both factors are >= 0 here).
FP_EXP2_FMA_FN float mul_ftz(float a, float b) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("mul.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  const float r = a * b;
  return r < FLT_MIN ? 0.f : r;
#endif
}
// p(f), Horner, c0 = 1.
FP_EXP2_FMA_FN float poly(float f) {
  float p = kC5;
  p = fmaf(p, f, kC4);
  p = fmaf(p, f, kC3);
  p = fmaf(p, f, kC2);
  p = fmaf(p, f, kC1);
  return fmaf(p, f, 1.f);
}
}  // namespace exp2_fma_detail

// 2^x for x <= 127 (the softmax's x = s * f - m * f is <= 0 up to a rounding), NaN not expected.
FP_EXP2_FMA_FN float exp2_fma(float x) {
  using namespace exp2_fma_detail;
  const float xc = fmaxf(x, -127.f);  // n = -127 below makes 2^n = 0
  const float t = xc + kRound;        // t's low mantissa bits hold n = rint(xc) (ties to even)
  const float n = t - kRound;
  const float f = xc - n;  // exact, in [-0.5, 0.5]
  // (bits(t) << 23) keeps n's low 9 bits in the exponent field (t's constant bits shift out);
  // + 127 << 23 biases it: 2^n, or +0 for n = -127.
  const float scale = from_bits((bits(t) << 23) + 0x3F800000u);
  return mul_ftz(poly(f), scale);
}

}  // namespace flashprobe::kernels::dev
