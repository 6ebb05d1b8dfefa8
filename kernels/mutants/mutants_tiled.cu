// tiled mutants at D = kMutantTiledDim (test binaries only).
#include "flashprobe/kernels/mutants.h"
#include "src/launchers.h"
#include "src/tiled.cuh"

namespace flashprobe::kernels::detail {
template void launch_tiled<Bug::causal_top_left, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::varlen_diag_global, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::gqa_mod, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::tail_unmasked, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::masked_row_nan, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::missing_barrier, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::lse_scale_twice, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::rowsum_f16, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::o_accum_f16, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::v_reads_k_strides, kMutantTiledDim>(const Params&, Stream);
template void launch_tiled<Bug::offset_32bit, kMutantTiledDim>(const Params&, Stream);
}
