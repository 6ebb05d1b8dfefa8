#pragma once
// The head-dim tile classes of the tensor-core paths (one list per path), read by their supports(),
// launchers and kernels (mma_attn.cuh), select(), the gate's domain, the bench and the tests.
// Constexpr only, so that device code can include it.
#include <cstddef>

namespace flashprobe::kernels {

// Head dims of the tensor-core paths (mma on NVIDIA, wgmma): a tile class is the width of the Q/K
// tiles (d) and of the V/O tiles (dv) one instantiation is built for; a problem runs in the first
// class of its path's list that is at least as wide on both sides. d and dv are multiples of
// kHeadDimStep (16-byte rows), d != dv is allowed. (d, dv) = the class runs the specialised
// instantiation; any other the general one, which loads the columns past d (Q, K) and dv (V) as
// zeros, skips the work that lies wholly in them and never stores them.
inline constexpr int kHeadDimStep = 8;
struct HeadDimClass {
  int d = 0, dv = 0;
  constexpr explicit operator bool() const { return d > 0; }
  constexpr bool operator==(const HeadDimClass&) const = default;
};
// mma: square classes. wgmma: square ones up to 128 and MLA's 192/128 (Q/K 192 wide, V/O 128).
// kMmaDimClasses: every class with the specialised and the general instantiation; on NVIDIA the
// ladder of soft-cap/ALiBi problems and of the variant mma/classes=coarse, on AMD the only one.
inline constexpr HeadDimClass kMmaDimClasses[] = {{64, 64}, {80, 80}, {96, 96}, {128, 128}, {256, 256}};
// mma's fine ladder, the one it runs on NVIDIA (mma_nvidia_class): kMmaDimClasses plus 160 and 192.
// Those two have one instantiation each: run-time d and dv up to the class, no soft-cap or ALiBi.
// In kMmaDimClasses d = 136..192 ran at 0.58-0.75x of the 256 class's TFLOP/s (H200,
// reports/data/h200-141gb-hbm3e/2026-11-26-perf-f1c0a4d); in these 1.12-1.36x faster (H100,
// reports/data/h100-80gb-hbm3/2026-11-27-headdim-fb56b67), and they passed the grid, the gate (same
// record), the soak and the sanitizers (2026-11-27-fine-soak-974195e; kernels/src/mma/PERF_NOTES.md,
// v12). No 224 class: one ran d = 200..224 at 0.83-0.89x of the 256 class (headdim-fb56b67).
// 32/32 likewise (d, dv <= 32 run with half the O registers of the 64 class: 168 registers, 3 blocks
// per SM instead of 2): 1.26-1.40x the 64 class at d = 8..32 (H100,
// reports/data/h100-80gb-hbm3/2026-11-27-headdim-small-708f029, as the variant mma/small=c32), grid,
// gate (same record), soak and sanitizers (2026-11-27-soak-8959679) passed (PERF_NOTES.md, "Small
// head dims").
inline constexpr HeadDimClass kMmaFineDimClasses[] = {{32, 32},   {64, 64},   {80, 80},   {96, 96},
                                                      {128, 128}, {160, 160}, {192, 192}, {256, 256}};
// wgmma: 64/64, 128/128, MLA's 192/128, 160/160 and 256/256 (192/128 before 160/160: a (d, dv) that
// fits both, e.g. 160/128, costs the same in either and keeps the measured class). The 256 class holds
// O in 128 accumulator registers per thread, so it takes 64 keys per tile (S: 32 registers) and, at
// 64 + 2 x 64 KB of shared memory, two K/V stages; 160/160 has rows of 32-dim chunks (the 64-byte
// swizzle: its V tile is not whole 64-dim chunks) and three stages of 64 keys (wgmma_config.h counts
// these). 160/160 and 256/256 measured correct and 1.43-2.60x mma over their head dims (H100,
// reports/data/h100-80gb-hbm3/2026-11-27-wgmma-classes-708f029): select() runs them on wgmma first.
inline constexpr HeadDimClass kWgmmaDimClasses[] = {{64, 64}, {128, 128}, {192, 128}, {160, 160}, {256, 256}};
// wgmma's classes with 96/96 and 224/224 (three and seven 32-dim chunks, the 64-byte swizzle, as
// 160/160) and 192/192 (below): the variant wgmma/classes=fine; WgmmaConfig is built for every class here. Compiled, not
// yet timed: the shipped wgmma runs d, dv in 72..96 in its 128 class, which ran them at 1.09-1.41x mma
// (H200, bf16, reports/data/h200-141gb-hbm3e/2026-11-26-perf-f1c0a4d), and 200..224 in its 256 class
// (0.67-0.86 of its d = 256 rate, H100, reports/data/h100-80gb-hbm3/2026-11-27-wgmma-classes-708f029),
// so they stay out of kWgmmaDimClasses until measured against those. 96/96 measured: correct, but
// 0.82-1.05x the 128 class at d = 72..96 (reports/data/h100-80gb-hbm3/2026-11-27-wgmma-fine-8959679).
// 192/192 (three 64-dim chunks, the 128-byte swizzle, O as m64n192k16, 64 keys: S 32 + O 96 + P 16
// registers, three stages of 48 KB beside Q's 48 KB) for d, dv in 168..192 and MLA-like 128/192,
// which the 256 class ran at 0.61-0.77 of its d = 256 rate (2026-11-27-wgmma-classes-708f029); after
// 192/128, which keeps the (d, dv <= 128) it measured. Compiled, not yet run on a GPU.
inline constexpr HeadDimClass kWgmmaFineDimClasses[] = {{64, 64},   {96, 96},   {128, 128}, {192, 128},
                                                        {160, 160}, {192, 192}, {224, 224}, {256, 256}};
// wgmma's tile of a class (WgmmaConfig, wgmma_config.h, is built from these; the gate's domain draws
// their edges): kWgmmaBlockRows query rows per block (two consumer warpgroups of 64), and keys per
// K/V tile 128, or 64 where the accumulators would not leave the consumers room: S (keys / 2
// registers per thread), O (dv / 2) and P (keys / 4) within 160 of their 240, as at 128/128 and
// 192/128. At 176 the consumers spilled in the tile loop (160/160 at 128 keys: 21 local loads and
// stores between its products, sm_90a SASS); 160/160 and 256/256 take 64 keys (128 and 176).
inline constexpr int kWgmmaBlockRows = 128;
constexpr int wgmma_tile_keys(HeadDimClass c) { return 128 / 2 + c.dv / 2 + 128 / 4 <= 160 ? 128 : 64; }
// The class of (d, dv) among `classes` (in order: the first that takes it), or {0, 0} when d or dv
// is not a positive multiple of kHeadDimStep or no class is wide enough.
template <std::size_t N>
constexpr HeadDimClass head_dim_class(const HeadDimClass (&classes)[N], int d, int dv) {
  if (d <= 0 || dv <= 0 || d % kHeadDimStep != 0 || dv % kHeadDimStep != 0) return {};
  for (const HeadDimClass& c : classes)
    if (d <= c.d && dv <= c.dv) return c;
  return {};
}
// The V/O width of the class whose Q/K width is d (classes of one path differ in d), 0 if none.
template <std::size_t N>
constexpr int class_dv(const HeadDimClass (&classes)[N], int d) {
  for (const HeadDimClass& c : classes)
    if (c.d == d) return c.dv;
  return 0;
}
// Whether (d, dv) is itself one of the classes.
template <std::size_t N>
constexpr bool has_class(const HeadDimClass (&classes)[N], int d, int dv) {
  for (const HeadDimClass& c : classes)
    if (c.d == d && c.dv == dv) return true;
  return false;
}
// mma's classes with the specialised instantiation (d = dv = D at compile time) and the general
// one; the fine ladder's others have only the one described above.
constexpr bool mma_specialised_class(int d) { return head_dim_class(kMmaDimClasses, d, d) == HeadDimClass{d, d}; }
// The class mma runs (d, dv) in on NVIDIA: the fine ladder's, or kMmaDimClasses' for a problem with
// soft-cap or ALiBi (extras; the fine ladder's own classes are built without them) and for the
// variant mma/classes=coarse. The launcher, select()'s reason, the gate's domain and bench's class
// ratios all ask this one function.
// The class wgmma runs (d, dv) in: kWgmmaDimClasses', or kWgmmaFineDimClasses' for the variant
// wgmma/classes=fine. The launcher, supports(), select()'s reason, the gate's domain and bench's class
// ratios ask this one function.
constexpr HeadDimClass wgmma_class(int d, int dv, bool fine) {
  return fine ? head_dim_class(kWgmmaFineDimClasses, d, dv) : head_dim_class(kWgmmaDimClasses, d, dv);
}
constexpr HeadDimClass mma_nvidia_class(int d, int dv, bool extras, bool coarse) {
  return extras || coarse ? head_dim_class(kMmaDimClasses, d, dv) : head_dim_class(kMmaFineDimClasses, d, dv);
}

}  // namespace flashprobe::kernels
