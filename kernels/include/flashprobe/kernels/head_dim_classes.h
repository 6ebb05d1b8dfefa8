#pragma once
// The head-dim tile classes of the tensor-core paths (one list per path), read by their supports(),
// launchers and kernels, select(), the gate's domain, the bench and the tests.
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
inline constexpr HeadDimClass kMmaDimClasses[] = {{64, 64}, {80, 80}, {96, 96}, {128, 128}, {256, 256}};
inline constexpr HeadDimClass kWgmmaDimClasses[] = {{64, 64}, {128, 128}, {192, 128}};
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

}  // namespace flashprobe::kernels
