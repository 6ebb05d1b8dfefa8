#pragma once
// decode: attention for a few query rows (Sq <= kDecodeMaxSq) over a long key range, the shape of a
// generation step: bound by the bandwidth of reading K and V once. Two kernels:
//   1. split kernel, grid (splits * row_tiles, Hkv, B): block ((split, tile), kv head, b) runs the
//      online softmax of up to R query rows that read the same kv head (a tile of the group's heads x
//      the sq positions, flashprobe/kernels/decode_plan.h) over the keys
//      [split * chunk, (split + 1) * chunk), masking per row, and writes each row's partial
//      (o_s normalised, lse_s).
//   2. combine kernel, one block per row: O = sum_s w_s o_s / sum_s w_s with w_s = exp(lse_s - max),
//      LSE = max + log(sum_s w_s).
// An empty split (no visible key) writes o_s = 0 and lse_s = -inf, so it has weight exp(-inf) = 0;
// if every split is empty the row gets O = 0 and LSE = -inf. Any split count works (1, odd, more
// splits than keys).
//
// Inside a block: a key row is read by a group of G lanes (G = lanes_per_key, a power of two), each
// lane owning 8 consecutive dims (16 bytes): one 16-byte load per lane per key for K and one for V.
// The 128 threads form 128/G key groups; a block step gives each group U = decode_unroll(R) keys,
// and the next step's K and V are loaded (two register buffers) while this step computes. Dot
// products are reduced over the G lanes with shuffles; each key group keeps its own running
// (m, l, o) per row; the groups are merged with shuffles inside a wave and through shared memory
// across waves. DECODE_NOTES.md has the counts and the reasoning.
//
// Rows whose K/V cannot be read as aligned 16-byte vectors (odd strides, d or dv not a multiple of
// 8) use the same kernel with eight 16-bit loads per chunk: same lanes, same keys, same arithmetic
// in the same order, so both loaders give bitwise the same result (the batch-invariance property
// compares a strided batch with a contiguous single element).
//
// Softmax in base 2: without soft-cap and ALiBi, scale * log2(e) is folded into q and the reduced
// dot product is the base-2 score; otherwise score() transforms the raw dot product.
#include "flashprobe/core/device.cuh"
#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/registry.h"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"

namespace flashprobe::kernels::dev {

inline constexpr int kDecodeWaves = kDecodeThreads / fp_dev::kWaveSize;
inline constexpr int kVec = kDecodeVecElems;
static_assert(kDecodeThreads % fp_dev::kWaveSize == 0, "whole waves per block");
static_assert(kDecodeMaxDim <= 32 * kVec && 32 <= fp_dev::kWaveSize, "a key row fits in the lanes of one wave");

// Workspace layout: partial o [rows][splits][dv] f32, then partial lse [rows][splits] f32.
struct DecodeWorkspace {
  float* o;
  float* lse;
};
inline DecodeWorkspace decode_workspace(const Params& p, int splits, void* ws) {
  auto* f = static_cast<float*>(ws);
  const std::int64_t parts = std::int64_t{p.batch} * p.hq * p.sq * splits;
  return {f, f + parts * p.dv};
}

// One lane's walk along the keys of a K or V tensor: its 8 dims of the row of key j start at at(j),
// `elem` elements apart, `n` of them inside the row (0..8). A lane past the row's end (n = 0) walks
// the row's first 8 dims instead: every address it forms is inside the tensor.
struct KeyStream {
  const std::uint16_t* base;  // key 0 of this (batch, kv head), at the lane's first dim
  std::int64_t key, elem;
  int n;

  FP_DEV const std::uint16_t* at(int j) const { return base + j * key; }
};
FP_DEV KeyStream key_stream(const void* t, const DevStrides& s, int b, int h, int x0, int dims) {
  const int n = dims - x0 < 0 ? 0 : dims - x0 < kVec ? dims - x0 : kVec;
  return {static_cast<const std::uint16_t*>(t) + offset4(s, b, 0, h, n > 0 ? x0 : 0), s.s, s.d, n};
}

// 16 bytes of one row at src: a vector load, or eight 16-bit loads. Loads are unconditional (no
// divergent branches around them: the compiler keeps them in flight) from addresses inside the
// tensor; what they read past the row's end or for keys outside the block's range is never used:
// q is 0 on dims past d, o past dv is never stored, and keys outside a row's range get p = 0 (the
// keys a block reads are real keys of the sequence, [0, keys(b)), so p * v is 0).
template <bool kVectorLoads>
FP_DEV uint4 load_chunk(const KeyStream& ks, const std::uint16_t* src) {
  if constexpr (kVectorLoads) {
    return *reinterpret_cast<const uint4*>(src);
  } else {
    const int last = ks.n > 0 ? ks.n - 1 : 0;
    std::uint32_t w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      w[e / 2] |= static_cast<std::uint32_t>(src[(e < last ? e : last) * ks.elem]) << (16 * (e % 2));
    return uint4{w[0], w[1], w[2], w[3]};
  }
}

// One step's K and V for one lane: U keys, 16 bytes of each.
template <int U>
struct KVChunks {
  uint4 k[U], v[U];
};

// The softmax state of R query rows over the keys one lane group has seen: running max m (base 2),
// sum l and this lane's 8 dims of the unnormalised o.
template <int R>
struct RowsState {
  float m[R], l[R], o[R][kVec];
};

// Merge another group's state (mo, lo, oo) of row r into s: the LSE-weighted sum. Two empty states
// stay empty (the weights are exp2(-inf) = 0 instead of exp2(-inf - -inf) = NaN).
template <int R>
FP_DEV void merge_row(RowsState<R>& s, int r, float mo, float lo, const float (&oo)[kVec]) {
  const float mx = fmaxf(s.m[r], mo);
  const float base = softmax_ref(mx);
  const float a = exp2f(s.m[r] - base), w = exp2f(mo - base);
  s.l[r] = s.l[r] * a + lo * w;
#pragma unroll
  for (int e = 0; e < kVec; ++e) s.o[r][e] = s.o[r][e] * a + oo[e] * w;
  s.m[r] = mx;
}

// The combine's threads: a split-kernel block's in decode/fused=on.
inline constexpr int kCombineThreads = kDecodeThreads;

// Programmatic dependent launch (decode/combine=pdl, src/decode_combine.cuh; sm_90). The split
// kernel's blocks allow the dependent kernel to start at once (no effect when none was launched as a
// programmatic dependent); the dependent waits until the grids it depends on have finished and their
// writes are visible (returns at once when it was launched without the programmatic attribute).
FP_DEV void allow_dependent_launch() {
#if defined(FP_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
FP_DEV void wait_for_prerequisite_grids() {
#if defined(FP_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// decode/fused=on (variants.h): each block walks `walk` consecutive splits of its row tile (its
// pipeline running on across their borders), and the last of a row tile's blocks to finish combines
// the tile's rows (arrivals counted in `arrivals`, zeroed in the same call; null when one block walks
// every split of its tile). Each split's partial is computed and written as a split block does.
struct DecodeWalk {
  int walk;
  unsigned* arrivals;  // [batch][hkv][row_tiles]
};

template <Bug bug>
FP_DEV void combine_row(const Params& p, int splits, const DecodeWorkspace& ws, std::int64_t row);

// The split kernel's block (kWalk false: one split, `walk` unused) or the walking block of
// decode/fused=on; the kernels below. kDepth: the steps of 16-byte loads issued ahead of the one
// that computes, minus one (2: the next step's loads in flight while a step computes; 3,
// decode/depth=3: the next two steps', three register buffers; the same keys, steps and
// arithmetic, so the same output).
template <class E, Bug bug, int R, bool kVectorLoads, bool kWalk, int kDepth = 2>
FP_DEV void decode_split_block(const Params& p, int lanes_per_key, int row_tiles, int splits, int chunk, const DecodeWorkspace& ws,
                               const DecodeWalk& walk) {
  static_assert(sizeof(typename E::storage) == 2, "decode reads 16-bit K and V");
  constexpr int U = decode_unroll(R);
  __shared__ float part_m[kDecodeWaves][R], part_l[kDecodeWaves][R];
  __shared__ float part_o[kDecodeWaves][R][kDecodeMaxDim];

  const int G = lanes_per_key;
  const int lane = fp_dev::lane_id(), wave = fp_dev::wave_id();
  const int sub = lane & (G - 1), x0 = sub * kVec;  // this lane's dims x0 .. x0 + 7
  const int groups = kDecodeThreads / G, group = static_cast<int>(threadIdx.x) / G;
  const int step = groups * U;
  // Split kernel: block x runs split x / row_tiles. Walk: block x runs the splits [first, last).
  const int tile = static_cast<int>(blockIdx.x) % row_tiles, first = static_cast<int>(blockIdx.x) / row_tiles * (kWalk ? walk.walk : 1);
  const int last = kWalk ? (first + walk.walk < splits ? first + walk.walk : splits) : first + 1;
  const int hk = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int rows = p.group * p.sq;
  // Row r of this block: t = tile * R + r is query head mask::q_head(hk, t / sq) (member t / sq of kv
  // head hk's group) at position t % sq; padding rows past the group's end (all keys masked) borrow
  // row 0's head.
  auto head_of = [&](int r) { return mask::q_head(hk, (tile * R + r < rows ? tile * R + r : tile * R) / p.sq, p.group); };
  auto pos_of = [&](int r) { return (tile * R + r < rows ? tile * R + r : tile * R) % p.sq; };

  // Each row's visible keys cut to the split; the block walks the union of the rows' ranges (no key
  // when jlo > jhi). Key indices fit in int (decode_supports: sk <= kDecodeMaxKeys). s0 is where the
  // split's steps start.
  const std::int64_t diag = diag_of<bug>(p, b);
  auto range_of = [&](int split, int (&lo)[R], int (&hi)[R], int& jlo, int& jhi, int& s0) {
    const std::int64_t split_begin = std::int64_t{split} * chunk;
    s0 = split_begin < p.sk ? static_cast<int>(split_begin) : p.sk;  // empty splits start past the keys
    const int s1 = (split_begin + chunk < p.sk ? static_cast<int>(split_begin + chunk) : p.sk) - 1;
    jlo = s1 + 1, jhi = s0 - 1;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      std::int64_t vlo = 1, vhi = 0;
      if (tile * R + r < rows) visible_range<bug>(p, b, pos_of(r), vlo, vhi);
      vlo = vlo > s0 ? vlo : s0;
      vhi = vhi < s1 ? vhi : s1;
      if (vlo > vhi) vlo = 1, vhi = 0;  // empty
      lo[r] = static_cast<int>(vlo), hi[r] = static_cast<int>(vhi);
      if (lo[r] <= hi[r]) {
        jlo = lo[r] < jlo ? lo[r] : jlo;
        jhi = hi[r] > jhi ? hi[r] : jhi;
      }
    }
  };
  int lo[R], hi[R], jlo, jhi, s0;
  range_of(first, lo, hi, jlo, jhi, s0);

  // score = dot * scale in base 2, or soft-cap / ALiBi through score(): those problems run one row
  // per block (decode_geometry), so blocks of several rows never compile the transform.
  const bool plain = R > 1 || (p.softcap <= 0.f && p.alibi == nullptr);
  const float qscale = plain ? p.scale * kLog2e : 1.f;
  float q[R][kVec];
  RowsState<R> st;
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      // Unconditional load from a dim inside the row, then 0 past d (branch-free, like the K/V loads).
      const float x = load<E>(p.q, offset4(p.qs, b, pos_of(r), head_of(r), x0 + e < p.d ? x0 + e : p.d - 1));
      q[r][e] = x0 + e < p.d ? x * qscale : 0.f;
      st.o[r][e] = 0.f;
    }
    st.m[r] = kNegInf;
    st.l[r] = 0.f;
  }
  auto reset_state = [&] {
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) st.o[r][e] = 0.f;
      st.m[r] = kNegInf;
      st.l[r] = 0.f;
    }
  };

  const KeyStream kst = key_stream(p.k, p.ks, b, hk, x0, p.d), vst = key_stream(p.v, p.vs, b, hk, x0, p.dv);
  // Slot u of step jb holds key jb + u * groups + group. Keys outside [jlo, jhi] (every row masks
  // them) read key jhi or jlo instead, a row inside the keys: no branch around the loads.
  auto key_of = [&](int jb, int u) { return jb + u * groups + group; };
  auto load_keys_in = [&](const KeyStream& ks, uint4 (&c)[U], int jb, int kl, int kh) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = key_of(jb, u);
      c[u] = load_chunk<kVectorLoads>(ks, ks.at(j < kl ? kl : j > kh ? kh : j));
    }
  };
  auto load_keys = [&](const KeyStream& ks, uint4 (&c)[U], int jb) { load_keys_in(ks, c, jb, jlo, jhi); };
  // The scores of a step's keys and the online-softmax update of (m, l), o rescaled; pr gets the
  // keys' weights for values_step.
  // `transformed` (a constant at each call, folded once inlined): soft-cap or ALiBi applied to the
  // raw dot product.
  auto scores_step = [&](const uint4 (&kc)[U], int jb, float (&pr)[R][U], bool transformed) {
    float dot[R][U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float kf[kVec];
      widen8<E>(kc[u], kf);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float acc = 0.f;
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc = fmaf(q[r][e], kf[e], acc);
        dot[r][u] = acc;
      }
    }
    // Sum over the G lanes of each key: the butterfly leaves the same sum in every lane of the group.
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
      if (off < G) {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int u = 0; u < U; ++u) dot[r][u] += fp_dev::shfl_xor(dot[r][u], off);
      }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float s[U], mx = st.m[r];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int j = key_of(jb, u);
        float x = dot[r][u];
        if (transformed) x = score(p, x, head_of(r), pos_of(r) + diag, j) * kLog2e;
        s[u] = j >= lo[r] && j <= hi[r] ? x : kNegInf;
        mx = fmaxf(mx, s[u]);
      }
      // Nothing visible yet: base 0 keeps the weights exp2(-inf) = 0 instead of NaN.
      const float base = softmax_ref(mx);
      const float alpha = exp2f(st.m[r] - base);
      float l = st.l[r] * alpha;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        pr[r][u] = exp2f(s[u] - base);
        l += pr[r][u];
      }
      st.l[r] = l;
      st.m[r] = mx;
#pragma unroll
      for (int e = 0; e < kVec; ++e) st.o[r][e] *= alpha;
    }
  };
  auto values_step = [&](const uint4 (&vc)[U], const float (&pr)[R][U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float vf[kVec];
      widen8<E>(vc[u], vf);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int e = 0; e < kVec; ++e) st.o[r][e] = fmaf(pr[r][u], vf[e], st.o[r][e]);
    }
  };
  auto load_step_in = [&](KVChunks<U>& buf, int jb, int kl, int kh) {
    load_keys_in(kst, buf.k, jb, kl, kh);
    load_keys_in(vst, buf.v, jb, kl, kh);
  };
  auto load_step = [&](KVChunks<U>& buf, int jb) { load_step_in(buf, jb, jlo, jhi); };
  auto compute_step = [&](const KVChunks<U>& buf, int jb) {
    float pr[R][U];
    scores_step(buf.k, jb, pr, false);
    values_step(buf.v, pr);
  };

  // One split from its first step to its last (jlo, jhi, lo, hi and s0 are the split's; the state
  // starts empty).
  auto run_split = [&] {
    if (jlo <= jhi) {  // block-uniform: every lane takes the same steps (the shuffles need all of them)
      // Steps start on the split's grid (s0 + n * step), so a key's lane group does not depend on
      // which rows share the block.
      int jb = s0 + (jlo - s0) / step * step;
      KVChunks<U> a, c;
      if constexpr (kDepth == 3) {
        if (kVectorLoads && plain) {
          // Two steps ahead: three steps of 16-byte loads in flight per lane while one computes.
          KVChunks<U> d;
          load_step(a, jb);
          load_step(c, jb + step);
          for (;;) {
            load_step(d, jb + 2 * step);
            compute_step(a, jb);
            jb += step;
            if (jb > jhi) break;
            load_step(a, jb + 2 * step);
            compute_step(c, jb);
            jb += step;
            if (jb > jhi) break;
            load_step(c, jb + 2 * step);
            compute_step(d, jb);
            jb += step;
            if (jb > jhi) break;
          }
          return;
        }
      }
      if (kVectorLoads && plain) {
        // The next step's loads are issued before this step computes (past the end they re-read key
        // jhi): two steps of 16-byte loads in flight per lane.
        load_step(a, jb);
        for (;;) {
          load_step(c, jb + step);
          compute_step(a, jb);
          jb += step;
          if (jb > jhi) break;
          load_step(a, jb + step);
          compute_step(c, jb);
          jb += step;
          if (jb > jhi) break;
        }
      } else {
        // One step in flight, K then V: 16-bit loads hold a register each until packed, and the score
        // transform (tanhf may be a call on AMD) keeps little live across it. The steps and the
        // arithmetic are the loop's above, so is the result.
        for (; jb <= jhi; jb += step) {
          float pr[R][U];
          load_keys(kst, a.k, jb);
          scores_step(a.k, jb, pr, !plain);
          load_keys(vst, a.v, jb);
          values_step(a.v, pr);
        }
      }
    }
  };
  // The state of the split into its partial: merge the key groups of a wave (lanes G, 2G, ... apart
  // hold the same dims), then the waves, and write it.
  auto flush = [&](int split) {
    for (int off = G; off < fp_dev::kWaveSize; off *= 2) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float oo[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e) oo[e] = fp_dev::shfl_xor(st.o[r][e], off);
        const float mo = fp_dev::shfl_xor(st.m[r], off), lo_other = fp_dev::shfl_xor(st.l[r], off);
        merge_row(st, r, mo, lo_other, oo);
      }
    }
    if (lane < G) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          if (x0 + e < p.dv) part_o[wave][r][x0 + e] = st.o[r][e];
        if (lane == 0) {
          part_m[wave][r] = st.m[r];
          part_l[wave][r] = st.l[r];
        }
      }
    }
    fp_dev::barrier();
    for (int x = static_cast<int>(threadIdx.x); x < R * p.dv; x += kDecodeThreads) {
      const int r = x / p.dv, dim = x % p.dv, t = tile * R + r;
      if (t >= rows) break;  // rows past the group's end come last
      float mb = kNegInf;
      for (int w = 0; w < kDecodeWaves; ++w) mb = fmaxf(mb, part_m[w][r]);
      // An empty split: every wave has m = -inf; skip the weights (exp2(-inf - -inf) would be NaN).
      float lb = 0.f, acc = 0.f;
      if (mb != kNegInf)
        for (int w = 0; w < kDecodeWaves; ++w) {
          const float wgt = exp2f(part_m[w][r] - mb);
          lb += wgt * part_l[w][r];
          acc += wgt * part_o[w][r][dim];
        }
      const std::int64_t part = ((std::int64_t{b} * p.hq + head_of(r)) * p.sq + pos_of(r)) * splits + split;
      ws.o[part * p.dv + dim] = lb > 0.f ? acc / lb : 0.f;
      if (dim == 0) ws.lse[part] = lb > 0.f ? (mb + log2f(lb)) * kLn2 : kNegInf;
    }
  };

  if constexpr (!kWalk) {
    run_split();
    flush(first);
  } else {
    // A barrier after each partial: the next one reuses the shared arrays.
    auto flush_walked = [&](int split) {
      flush(split);
      fp_dev::barrier();
      reset_state();
    };
    if (kVectorLoads && plain) {
      // The loads of a split's first step are issued while the previous split's last step computes:
      // the pipeline runs on across split borders. Splits without a visible key write the empty
      // partial (the reset state) and issue no loads.
      int cs = first;
      while (jlo > jhi && cs < last) {
        flush_walked(cs);
        if (++cs < last) range_of(cs, lo, hi, jlo, jhi, s0);
      }
      if (cs < last) {
        int jb = s0 + (jlo - s0) / step * step;
        KVChunks<U> a, c;
        // Loads the step after jb into nxt (this split's next step, else the first step of the next
        // split with keys; past the last, jb's step again, never used) and computes cur (step jb).
        // True once the block's last split is written.
        auto advance = [&](const KVChunks<U>& cur, KVChunks<U>& nxt) {
          int ns = cs, njb = jb + step, nlo = jlo, nhi = jhi;
          if (njb > jhi) {
            int dlo[R], dhi[R], ns0 = s0;
            for (ns = cs + 1; ns < last; ++ns) {
              range_of(ns, dlo, dhi, nlo, nhi, ns0);
              if (nlo <= nhi) break;
            }
            if (ns < last) njb = ns0 + (nlo - ns0) / step * step;
            else njb = jb, nlo = jlo, nhi = jhi;
          }
          load_step_in(nxt, njb, nlo, nhi);
          compute_step(cur, jb);
          if (ns != cs) {
            for (int e = cs; e < ns; ++e) flush_walked(e);  // this split, then the empty ones after it
            if (ns == last) return true;
            cs = ns;
            range_of(cs, lo, hi, jlo, jhi, s0);
          }
          jb = njb;
          return false;
        };
        load_step(a, jb);
        for (;;) {
          if (advance(a, c)) break;
          if (advance(c, a)) break;
        }
      }
    } else {
      for (int cs = first;;) {
        run_split();
        flush_walked(cs);
        if (++cs == last) break;
        range_of(cs, lo, hi, jlo, jhi, s0);
      }
    }
    // Every split of this block is written. The last of the row tile's blocks to get here combines
    // the tile's rows from every split's partial, as decode_combine does.
    if (walk.arrivals != nullptr) {
      // The block's partials are written (the barrier after the last one); thread 0 releases them
      // with its arrival (a fence, then the count: the barrier makes the other threads' writes part
      // of what it releases) and, if it arrived last, acquires the others' (the fence after).
      __shared__ int last_arrival;
      if (threadIdx.x == 0) {
        __threadfence();
        const unsigned before = atomicAdd(walk.arrivals + (std::int64_t{b} * p.hkv + hk) * row_tiles + tile, 1u);
        __threadfence();
        last_arrival = before + 1 == gridDim.x / static_cast<unsigned>(row_tiles);
      }
      fp_dev::barrier();
      if (!last_arrival) return;
    }
    for (int r = 0; r < R && tile * R + r < rows; ++r)
      combine_row<Bug::none>(p, splits, ws, (std::int64_t{b} * p.hq + head_of(r)) * p.sq + pos_of(r));
  }
}

template <class E, Bug bug, int R, bool kVectorLoads>
__global__ FP_LAUNCH_BOUNDS(kDecodeThreads, decode_blocks_per_sm(R)) void decode_split(Params p, int lanes_per_key, int row_tiles,
                                                                                     int splits, int chunk, DecodeWorkspace ws) {
  allow_dependent_launch();
  decode_split_block<E, bug, R, kVectorLoads, false>(p, lanes_per_key, row_tiles, splits, chunk, ws, DecodeWalk{1, nullptr});
}

// decode/depth=3: one row per block, 16-byte loads, two steps ahead; the registers of 2 blocks per SM
// (the half-wave plan's residency at batch 1).
template <class E>
__global__ FP_LAUNCH_BOUNDS(kDecodeThreads, 2) void decode_split_deep(Params p, int lanes_per_key, int row_tiles, int splits, int chunk,
                                                                    DecodeWorkspace ws) {
  allow_dependent_launch();
  decode_split_block<E, Bug::none, 1, true, false, 3>(p, lanes_per_key, row_tiles, splits, chunk, ws, DecodeWalk{1, nullptr});
}

template <class E, int R, bool kVectorLoads>
__global__ FP_LAUNCH_BOUNDS(kDecodeThreads, decode_blocks_per_sm(R)) void decode_split_walk(Params p, int lanes_per_key, int row_tiles,
                                                                                          int splits, int chunk, DecodeWorkspace ws,
                                                                                          DecodeWalk walk) {
  decode_split_block<E, Bug::none, R, kVectorLoads, true>(p, lanes_per_key, row_tiles, splits, chunk, ws, walk);
}

// Row `row` ((b * Hq + h) * Sq + i, the LSE index too) from its splits' partials, by the block's
// kCombineThreads threads: decode_combine's block, and in decode/fused=on the last block of a row
// tile (the same code on the same partials: bitwise the same output).
template <Bug bug>
FP_DEV void combine_row(const Params& p, int splits, const DecodeWorkspace& ws, std::int64_t row) {
  const int i = static_cast<int>(row % p.sq);
  const int h = static_cast<int>((row / p.sq) % p.hq);
  const int b = static_cast<int>(row / (std::int64_t{p.sq} * p.hq));
  const float* lse = ws.lse + row * splits;
  // The odd-split mutant merges pairs of splits and forgets the odd one out.
  const int merged = bug == Bug::split_odd_dropped ? splits - splits % 2 : splits;
  float mx = kNegInf;
  for (int s = 0; s < merged; ++s) {
    // The mutant treats an empty split as the end of the row's keys; later splits are lost.
    if (bug == Bug::combine_skips_empty && lse[s] == kNegInf) break;
    mx = fmaxf(mx, lse[s]);
  }
  float sum = 0.f;
  if (mx != kNegInf)
    for (int s = 0; s < merged; ++s) {
      if (bug == Bug::combine_skips_empty && lse[s] == kNegInf) break;
      sum += expf(lse[s] - mx);  // an empty split adds exp(-inf) = 0
    }
  for (int x = static_cast<int>(threadIdx.x); x < p.dv; x += kCombineThreads) {
    float acc = 0.f;
    if (mx != kNegInf)
      for (int s = 0; s < merged; ++s) {
        if (bug == Bug::combine_skips_empty && lse[s] == kNegInf) break;
        acc += expf(lse[s] - mx) * ws.o[(row * splits + s) * p.dv + x];
      }
    store(p.o, offset4(p.os, b, i, h, x), p.out_dtype, sum > 0.f ? acc / sum : 0.f);
  }
  if (threadIdx.x == 0) p.lse[row] = sum > 0.f ? mx + logf(sum) : kNegInf;
}

template <Bug bug>
__global__ __launch_bounds__(kCombineThreads) void decode_combine(Params p, int splits, DecodeWorkspace ws) {
  combine_row<bug>(p, splits, ws, blockIdx.x);
}

// Whether the rows of a [B, S, H, n] tensor can be read as aligned 16-byte vectors: 16-byte aligned
// base, unit element stride, n and every stride of a dimension with more than one index a multiple
// of 8 elements.
inline bool rows_16b(const void* base, const DevStrides& s, int batch, int keys, int heads, int n) {
  auto fits = [](std::int64_t stride, int extent) { return extent <= 1 || stride % kVec == 0; };
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && s.d == 1 && n % kVec == 0 && fits(s.b, batch) &&
         fits(s.s, keys) && fits(s.h, heads);
}

template <class E, Bug bug, int R>
void launch_split(const Params& p, const DecodeGeometry& g, int splits, int chunk, DecodeWorkspace ws, Stream s) {
  // The row tiles of one kv head and split are neighbours in launch order: they read the same keys,
  // the later ones mostly from L2.
  const dim3 grid(static_cast<unsigned>(splits * g.row_tiles), static_cast<unsigned>(p.hkv), static_cast<unsigned>(p.batch));
  const bool vec = rows_16b(p.k, p.ks, p.batch, p.sk, p.hkv, p.d) && rows_16b(p.v, p.vs, p.batch, p.sk, p.hkv, p.dv);
  if (vec) decode_split<E, bug, R, true><<<grid, kDecodeThreads, 0, s>>>(p, g.lanes_per_key, g.row_tiles, splits, chunk, ws);
  else decode_split<E, bug, R, false><<<grid, kDecodeThreads, 0, s>>>(p, g.lanes_per_key, g.row_tiles, splits, chunk, ws);
}

template <class E, Bug bug>
void launch_split(const Params& p, const DecodeGeometry& g, int splits, int chunk, DecodeWorkspace ws, Stream s) {
  switch (g.rows_per_block) {
    case 1: launch_split<E, bug, 1>(p, g, splits, chunk, ws, s); return;
    case 2: launch_split<E, bug, 2>(p, g, splits, chunk, ws, s); return;
    default: launch_split<E, bug, kDecodeMaxRowsPerBlock>(p, g, splits, chunk, ws, s); return;
  }
}

// decode/depth=3's split kernel: decode_split_deep where a block has one row and 16-byte loads, the
// split kernel elsewhere (its other loops do not change with the depth).
template <class E>
void launch_split_deep(const Params& p, const DecodeGeometry& g, int splits, int chunk, DecodeWorkspace ws, Stream s) {
  const bool vec = rows_16b(p.k, p.ks, p.batch, p.sk, p.hkv, p.d) && rows_16b(p.v, p.vs, p.batch, p.sk, p.hkv, p.dv);
  if (!vec || g.rows_per_block != 1) return launch_split<E, Bug::none>(p, g, splits, chunk, ws, s);
  const dim3 grid(static_cast<unsigned>(splits * g.row_tiles), static_cast<unsigned>(p.hkv), static_cast<unsigned>(p.batch));
  decode_split_deep<E><<<grid, kDecodeThreads, 0, s>>>(p, g.lanes_per_key, g.row_tiles, splits, chunk, ws);
}

}  // namespace flashprobe::kernels::dev

namespace flashprobe::kernels::detail {
template <Bug bug>
void launch_decode(const Params& p, int splits, void* workspace, Stream s) {
  const auto ws = dev::decode_workspace(p, splits, workspace);
  const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group, p.sq, p.softcap > 0.f || p.alibi != nullptr);
  const int chunk = decode_chunk(p.sk, splits, g.keys_per_step);
  // The combine mutant's split kernel is the production one (fewer instantiations to compile).
  constexpr Bug split_bug = bug == Bug::combine_skips_empty || bug == Bug::split_odd_dropped ? Bug::none : bug;
  if (p.dtype == DType::bf16) dev::launch_split<dev::BF16, split_bug>(p, g, splits, chunk, ws, s);
  else dev::launch_split<dev::F16, split_bug>(p, g, splits, chunk, ws, s);
  FP_CHECK_LAUNCH("decode_split");
  dev::decode_combine<bug><<<static_cast<unsigned>(p.batch * p.hq * p.sq), dev::kCombineThreads, 0, s>>>(p, splits, ws);
  FP_CHECK_LAUNCH("decode_combine");
}
}  // namespace flashprobe::kernels::detail
