// decode/fused=on (variants.h): the split kernel walking `walk` splits per block, the combine done by
// the last block of each row tile (src/decode.cuh, DecodeWalk). One kernel launch, after a memset of
// the arrival counters when a row tile has more than one block.
#include "flashprobe/core/vendor_async.h"
#include "src/decode.cuh"
#include "src/launchers.h"

namespace flashprobe::kernels::dev {
namespace {

template <class E, int R>
void launch_walk(const Params& p, const DecodeGeometry& g, int splits, int chunk, DecodeWorkspace ws, DecodeWalk walk, Stream s) {
  // Block x walks the splits [x / row_tiles * walk, ...) of row tile x % row_tiles.
  const dim3 grid(static_cast<unsigned>(decode_walk_blocks(splits, walk.walk) * g.row_tiles), static_cast<unsigned>(p.hkv),
                  static_cast<unsigned>(p.batch));
  const bool vec = rows_16b(p.k, p.ks, p.batch, p.sk, p.hkv, p.d) && rows_16b(p.v, p.vs, p.batch, p.sk, p.hkv, p.dv);
  if (vec) decode_split_walk<E, R, true><<<grid, kDecodeThreads, 0, s>>>(p, g.lanes_per_key, g.row_tiles, splits, chunk, ws, walk);
  else decode_split_walk<E, R, false><<<grid, kDecodeThreads, 0, s>>>(p, g.lanes_per_key, g.row_tiles, splits, chunk, ws, walk);
}

template <class E>
void launch_walk(const Params& p, const DecodeGeometry& g, int splits, int chunk, DecodeWorkspace ws, DecodeWalk walk, Stream s) {
  switch (g.rows_per_block) {
    case 1: launch_walk<E, 1>(p, g, splits, chunk, ws, walk, s); return;
    case 2: launch_walk<E, 2>(p, g, splits, chunk, ws, walk, s); return;
    default: launch_walk<E, kDecodeMaxRowsPerBlock>(p, g, splits, chunk, ws, walk, s); return;
  }
}

}  // namespace
}  // namespace flashprobe::kernels::dev

namespace flashprobe::kernels::detail {

void launch_decode_walk(const Params& p, int splits, int walk, void* workspace, Stream s) {
  const auto ws = dev::decode_workspace(p, splits, workspace);
  const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group, p.sq, p.softcap > 0.f || p.alibi != nullptr);
  const int chunk = decode_chunk(p.sk, splits, g.keys_per_step);
  dev::DecodeWalk w{walk, nullptr};
  if (decode_walk_blocks(splits, walk) > 1) {
    // The arrival counters follow the partial LSEs (decode_walk_workspace_bytes, decode_plan.h).
    w.arrivals = reinterpret_cast<unsigned*>(ws.lse + std::int64_t{p.batch} * p.hq * p.sq * splits);
    FP_CHECK(fp_rt::memset_async(w.arrivals, 0, static_cast<std::size_t>(decode_arrival_counters(p.batch, p.hkv, g)) * sizeof(unsigned), s));
  }
  if (p.dtype == DType::bf16) dev::launch_walk<dev::BF16>(p, g, splits, chunk, ws, w, s);
  else dev::launch_walk<dev::F16>(p, g, splits, chunk, ws, w, s);
  FP_CHECK_LAUNCH("decode_split (walk)");
}

}  // namespace flashprobe::kernels::detail
