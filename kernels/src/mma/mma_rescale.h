#pragma once
// The mma kernel's conditional rescale (PERF_NOTES.md; FlashAttention-4's), at D = 128: a wave
// rescales its rows' O, l and max only when some row's max has grown by more than a threshold
// (base-2 exponent units) since the max they are relative to. Until then P = exp2(s - kept max) is
// at most 2^threshold.
// Host and device code: the launcher passes the threshold to the kernel as an argument. The default
// threshold is -inf (rescale on every growth: FlashAttention-2's numerics); the variant
// mma/rescale=lazy (variants.h) opts in to the lazy one.
namespace flashprobe::kernels::dev {

// The lazy threshold: P stays at most 2^8 = 256 (f16 and bf16 keep their relative precision there,
// far below f16's 65504), and for scores that settle after the first tiles nothing is rescaled again.
inline constexpr float kMmaRescaleLog2 = 8.f;

// Where the kernel is compiled with the conditional rescale: D = 128 only. Elsewhere every growth of
// a row's max rescales (mma/rescale=lazy runs the shipped code there). Measured against that on the H100: at D = 64 the
// conditional form was 1-3 % slower on most S = 2048-16384 shapes (`2026-11-24-mma-v10-ab/`), and at
// D = 80, 96 and 256 its default (always) was 1-4 % slower, though lazy was 2-6 % faster
// (`2026-11-24-mma-v10-odd-dims/`).
template <int D>
constexpr bool mma_lazy_rescale() {
  return D == 128;
}

// The rescale of a launch:
//   always (the shipped kernel): threshold -inf, so that every tile on which a row's max grows at
//     all is rescaled. Each row's largest P is then exactly 1, as in FlashAttention-2 and the
//     oracle's emulation.
//   lazy (the variant mma/rescale=lazy, 4-7 % faster at D = 128 on the H100): kMmaRescaleLog2. A
//     row's largest P is then 2^x with 0 < x <= 8, rounded to the input type, while l sums the
//     unrounded P: each row's O carries a common scale error of up to half an ulp of P. The oracle's
//     bias check (mean signed error over a problem's outputs) saw it in 1 of about 1950 soak cases, a
//     problem with 2 rows; it is not a rounding direction but it is not what FlashAttention-2
//     computes either, so it is not shipped (PERF_NOTES.md).
enum class MmaRescale : int { always = 0, lazy = 1 };

constexpr float mma_rescale_log2(MmaRescale r = MmaRescale::always) {
  return r == MmaRescale::lazy ? kMmaRescaleLog2 : -__builtin_huge_valf();
}

}  // namespace flashprobe::kernels::dev
