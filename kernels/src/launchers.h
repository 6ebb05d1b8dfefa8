#pragma once
// Host entry points of the device code, one per kernel template and Bug value. Production .cu files
// instantiate Bug::none; kernels/mutants/*.cu instantiate the mutants (test binaries only). In a
// build without GPU backend none of these exist and the registry never calls them.
#include <cstddef>

#include "flashprobe/kernels/bug.h"
#include "flashprobe/kernels/kv_append.h"
#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {
// The tensor-core kernel's entry (src/mma/mma_registry.cpp).
KernelInfo make_mma_kernel();
// The Hopper wgmma + TMA kernel's entry (src/wgmma/wgmma_registry.cpp).
KernelInfo make_wgmma_kernel();
}  // namespace flashprobe::kernels

namespace flashprobe::kernels::detail {

// The sm number of an NVIDIA device (90 for sm_90), from its arch string where arch_number is left
// 0; 0 for other vendors or an unknown arch (mma, its backward and wgmma decide by it).
int nvidia_sm(const DeviceInfo& dev);

// ref3pass: workspace = ref3pass_workspace_bytes(p) bytes (the f32 score matrix S).
std::size_t ref3pass_workspace_bytes(const AttnProblem& p);
template <Bug bug>
void launch_ref3pass(const Params& p, void* workspace, Stream s);

// tiled: D = Dv = dim; one function per dim so each lives in its own translation unit.
template <Bug bug, int D>
void launch_tiled(const Params& p, Stream s);

// decode: `splits` key splits; workspace = decode_workspace_bytes(p, splits).
std::size_t decode_workspace_bytes(const AttnProblem& p, int splits);
template <Bug bug>
void launch_decode(const Params& p, int splits, void* workspace, Stream s);
// How the two-kernel decode merges its splits: decode_combine (the shipped kernel, its loads in loops
// over the splits), decode_combine_wide (every split's LSE, then a batch of partials, loaded at once;
// the same sums in the same order), or the wide kernel launched as a programmatic dependent of the
// split kernel (PDL, sm_90; a plain launch elsewhere).
enum class DecodeCombine { loop, wide, pdl };
// A decode entry's launch choices (registry.cpp's make_decode_variant; variants.h): splits > 0 forces
// the split count (else decode_plan_splits; decode_fused_splits when fused or half_plan, decode_splits
// when full_plan); fused runs
// launch_decode_walk, each block walking `walk` splits (0: decode_walk's plan for this device and
// batch; a forced walk above the split count walks them all); combine picks the two-kernel decode's
// combine (launch_decode_combined; not with fused).
struct DecodeOptions {
  int splits = 0;
  bool fused = false;
  int walk = 0;
  bool half_plan = false;
  bool full_plan = false;
  DecodeCombine combine = DecodeCombine::loop;
  int depth = 2;  // steps of loads ahead of the computing one plus one: 2, or 3 (decode_split_deep)
  bool mma = false;  // decode/mma=on: the tensor-core split kernel where decode_mma_takes (decode_mma_splits' plan)
};
// decode with the combine `c` and the split kernel's load depth (2 or 3; loop at depth 2 is
// launch_decode<Bug::none>); workspace = decode_workspace_bytes(p, splits). Bitwise
// launch_decode<Bug::none>'s output.
void launch_decode_combined(const Params& p, int splits, DecodeCombine c, int depth, void* workspace, Stream s);
// decode/mma=on: the tensor-core split kernel (src/decode_mma.cuh; NVIDIA) where decode_mma_takes the
// problem (any strides), decode's split kernel elsewhere, then decode's combine; workspace =
// decode_workspace_bytes(p, splits).
void launch_decode_mma(const Params& p, int splits, void* workspace, Stream s);
// Its tensor-core split kernel (decode_mma.cu, CUDA tree only): `chunk` keys per split, a multiple of
// kDecodeMmaKeysPerTile except where the forced count leaves uneven borders (decode_chunk).
void launch_decode_mma_split(const Params& p, int splits, int chunk, float* partial_o, float* partial_lse, Stream s);
// decode/fused=on: `splits` key splits, `walk` of them per block (1..splits), the combine in the last
// block of each row tile; workspace = decode_walk_workspace_bytes(p, splits, walk) (the partials, then
// the arrival counters of decode_plan.h when a row tile has more than one block).
std::size_t decode_walk_workspace_bytes(const AttnProblem& p, int splits, int walk);
void launch_decode_walk(const Params& p, int splits, int walk, void* workspace, Stream s);

}  // namespace flashprobe::kernels::detail
