#include "kernel_grid.h"

#include <cmath>

#include "../common/test_problem.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/kernels/head_dim_classes.h"

namespace flashprobe::kernels::testing {

AttnProblem make_problem(int batch, int hq, int hkv, int sq, int sk, int d) {
  return flashprobe::testing::test_problem(batch, hq, hkv, sq, sk, d, DType::f16);
}

namespace {

std::vector<double> alibi(int hq) {  // the geometric slopes of the ALiBi paper: 2^(-8(h+1)/H)
  std::vector<double> s;
  for (int h = 0; h < hq; ++h) s.push_back(std::pow(2.0, -8.0 * (h + 1) / hq));
  return s;
}

std::vector<GridCase> build() {
  std::vector<GridCase> g;
  std::uint64_t seed = 1000;
  auto add = [&](std::string feature, AttnProblem p, InputDist dist = {}) { g.push_back({std::move(feature), std::move(p), dist, seed++}); };

  // Key counts at and around every tile edge, for decode rows (1, 3), a row count inside the first
  // query tile (17) and one past it (70); causal and not.
  for (int sk : kGridSk)
    for (int sq : {1, 3, 17, 70})
      for (Causal c : {Causal::none, Causal::bottom_right}) {
        AttnProblem p = make_problem(1, 2, 1, sq, sk, 64);
        p.causal = c;
        add("sk_edge", p);
      }
  // Query counts in the gap between 1 and the tile heights (16, 32, 64) and just past them.
  for (int sq : {2, 5, 8, 9, 15, 16, 31, 33, 63, 65})
    for (int d : {64, 128}) {
      AttnProblem p = make_problem(2, 2, 2, sq, 100, d);
      p.causal = Causal::bottom_right;
      add("sq_gap", p);
    }
  // Several query blocks of the mma kernel (128 rows each, 32 per warp): rows just below,
  // just past and well past one and two blocks, launched heaviest-first under a causal mask, with
  // Sk != Sq (the diagonal off the block edges), every head dim, and the soft-cap/ALiBi
  // instantiation (32-key tiles at D = 128).
  for (int sq : {127, 129, 300})
    for (int d : {64, 128}) {
      AttnProblem p = make_problem(1, 2, 1, sq, sq + 37, d);
      p.causal = Causal::bottom_right;
      add("multi_block", p);
    }
  for (int d : {80, 96, 256}) add("multi_block", make_problem(1, 2, 1, 129, 100, d));
  {
    AttnProblem p = make_problem(1, 2, 1, 200, 150, 128);
    p.causal = Causal::top_left;
    add("multi_block", p);
    p = make_problem(1, 4, 2, 150, 200, 128);
    p.causal = Causal::bottom_right;
    p.softcap = 20;
    p.alibi_slopes = alibi(4);
    p.window_left = 70;
    add("multi_block", p, InputDist{2.0, -1});
  }
  // A row's first or last visible key on the first or last key of a 64-key tile, for the rows that
  // end or start a 32-row warp (mma at D = 64 skips a tile per warp by those rows' bounds): with
  // Sq = 96 and Sk = Sq + delta, the last row of warp w sees up to key 32w + 31 + delta; with a left
  // window wl, the first row of warp w starts at 32w + delta - wl. A skip that dropped the tile
  // whose last key is a warp's first visible one failed only these cases of the grid (H100,
  // 2026-11-24).
  for (int delta : {0, 1, 2, 31, 32, 33, 34, 63, 64, 65}) {
    AttnProblem p = make_problem(1, 2, 1, 96, 96 + delta, 64);
    p.causal = Causal::bottom_right;
    add("diag_edge", p);
  }
  for (int wl : {1, 3})
    for (int delta : {0, 2, 32, 34}) {
      AttnProblem p = make_problem(1, 2, 1, 96, 96 + delta, 64);
      p.causal = Causal::bottom_right;
      p.window_left = wl;
      add("diag_edge", p);
    }
  // Three 128-row query blocks over many key tiles (the wgmma kernel's TMA ring wraps several times;
  // causal blocks start mid-tile), every tile class of the Hopper path and its variant wgmma/classes=fine
  // (kWgmmaFineDimClasses), GQA.
  for (const HeadDimClass& w : kWgmmaFineDimClasses)
    for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left}) {
      AttnProblem p = make_problem(1, 4, 2, 300, 700, w.d);
      p.dv = w.dv;
      p.causal = c;
      add("multi_block", p);
    }
  // Key counts one past and one short of a 64-key tile edge that is not a 128-key one (63, 65, 193),
  // for the tile classes wider than 128, whose rings hold 64-key tiles (wgmma_config.h kBn: 160/160,
  // 192/192, 224/224, 256/256; 192/128 keeps 128), causal off the diagonal's tile edges and not.
  for (const HeadDimClass& w : kWgmmaFineDimClasses)
    if (w.d > 128)
      for (int sk : {63, 65, 193}) {
        AttnProblem p = make_problem(1, 2, 1, 70, sk, w.d);
        p.dv = w.dv;
        p.causal = sk == 65 ? Causal::none : Causal::bottom_right;
        add("sk_edge_64", p);
      }
  // GQA groups of 3 and 6 with two kv heads (h % Hkv and h / group differ).
  for (auto [hq, hkv] : {std::pair{6, 2}, std::pair{12, 2}, std::pair{6, 1}})
    for (int sq : {1, 4, 40}) {
      AttnProblem p = make_problem(2, hq, hkv, sq, 77, 64);
      p.causal = sq == 40 ? Causal::bottom_right : Causal::none;
      add("gqa", p);
    }
  // Every head dim of tiled, and odd ones for the other paths.
  for (int d : {64, 80, 96, 128, 256, 72, 40})
    for (int sq : {1, 37})
      for (int sk : {50, 129}) add("head_dim", make_problem(1, 2, 1, sq, sk, d));
  {
    AttnProblem p = make_problem(1, 2, 2, 5, 33, 64);
    p.dv = 96;
    add("dv_ne_d", p);
    p.sq = 40;
    add("dv_ne_d", p);
  }
  // Every head dim the tensor-core paths take (multiples of 8 up to 256): most run in a wider tile
  // class with the columns past d and dv masked (registry.h). Two query blocks of mma (129 rows), a
  // causal mask off the block edges, keys past one 128-key tile; both neighbours of each class edge.
  for (int d = 8; d <= 256; d += 8) {
    AttnProblem p = make_problem(1, 2, 1, 129, 150, d);
    p.causal = Causal::bottom_right;
    add("tail_dim", p);
  }
  // d != dv on the tensor cores: MLA's 192/128 (wgmma's own class) and what its class takes below
  // it, dv wider than d, both below their class, dv past d's class (mma's class follows the wider
  // one), both below the smallest class (mma/small=...), across one and two query blocks.
  for (auto [d, dv] : {std::pair{192, 128}, std::pair{160, 128}, std::pair{192, 64}, std::pair{128, 192}, std::pair{64, 128},
                       std::pair{40, 72}, std::pair{256, 64}, std::pair{96, 40}, std::pair{8, 256}, std::pair{16, 48},
                       std::pair{56, 24}})
    for (int sq : {40, 129}) {
      AttnProblem p = make_problem(2, 4, 2, sq, 140, d);
      p.dv = dv;
      p.causal = sq == 40 ? Causal::none : Causal::bottom_right;
      add("dv_ne_d", p);
    }
  // The small head dims' instantiations at their tile edges (mma's 32 class and class 64's run-time
  // tail, also with a floor of blocks per SM: mma/small=...): 128-row query blocks just below and past
  // one block and over three, keys at a 64-key tile edge, one past it and one short of three tiles.
  for (int d : {32, 48})
    for (auto [sq, sk] : {std::pair{127, 64}, std::pair{129, 65}, std::pair{300, 191}, std::pair{300, 193}}) {
      AttnProblem p = make_problem(1, 2, 1, sq, sk, d);
      p.causal = sk % 2 == 1 ? Causal::bottom_right : Causal::none;
      add("small_edge", p);
    }
  // Rows that start 16 bytes into a 32-byte sector: d % 16 == 8 puts every other head's rows there in
  // [b, s, h, d], which wgmma/align=sector loads with boxes 8 dims early (src/wgmma/wgmma_config.h
  // sector_shift). Two kv heads (the second mid-sector, K's and V's rows a whole number of sectors
  // apart) and four query heads, in each tile class the variant is built for, K's shift without V's
  // and V's without K's, two query blocks, causal and not.
  for (auto [d, dv] : {std::pair{24, 24}, std::pair{56, 56}, std::pair{72, 72}, std::pair{120, 120}, std::pair{136, 136},
                       std::pair{152, 152}, std::pair{168, 168}, std::pair{248, 248}, std::pair{152, 144}, std::pair{64, 136}})
    for (Causal c : {Causal::none, Causal::bottom_right}) {
      AttnProblem p = make_problem(1, 4, 2, 129, 150, d);
      p.dv = dv;
      p.causal = c;
      add("mid_sector", p);
    }
  // Tail dims with the other features: the general instantiation's soft-cap/ALiBi (mma), rows that
  // are not 16-byte aligned (element-wise loads must stop at d too), BHSD, windows, per-batch keys.
  {
    AttnProblem p = make_problem(1, 4, 2, 70, 130, 40);
    p.softcap = 20;
    p.alibi_slopes = alibi(4);
    p.causal = Causal::bottom_right;
    add("tail_dim_features", p, InputDist{2.0, -1});
    AttnProblem u = make_problem(2, 2, 2, 33, 70, 72);
    u.k = Strides{70LL * 2 * 75, 2 * 75, 75, 1};  // rows 75 elements apart, not 16-byte multiples: element-wise loads
    u.v = Strides{70LL * 2 * 75, 2 * 75, 75, 1};
    u.dv = 48;
    add("tail_dim_features", u);
    AttnProblem b = make_problem(2, 3, 3, 65, 90, 104);
    b.with_layout(TensorLayout::bhsd);
    b.causal = Causal::top_left;
    add("tail_dim_features", b);
    AttnProblem w = make_problem(1, 2, 1, 100, 129, 200);
    w.window_left = 16;
    w.window_right = 3;
    add("tail_dim_features", w);
    AttnProblem sl = make_problem(3, 2, 1, 20, 100, 136);
    sl.seqlens_k = {0, 37, 100};
    sl.dv = 152;
    add("tail_dim_features", sl);
    // mma's fine ladder: soft-cap where it has a class of its own (176: 192 there, 256 in
    // kMmaDimClasses), which mma runs in kMmaDimClasses; element-wise loads in a fine-only class.
    AttnProblem fc = make_problem(1, 4, 2, 70, 130, 176);
    fc.softcap = 20;
    fc.causal = Causal::bottom_right;
    add("tail_dim_features", fc, InputDist{2.0, -1});
    AttnProblem fu = make_problem(2, 2, 2, 33, 70, 168);
    fu.k = Strides{70LL * 2 * 171, 2 * 171, 171, 1};  // rows 171 elements apart: element-wise loads
    fu.v = Strides{70LL * 2 * 171, 2 * 171, 171, 1};
    fu.dv = 136;
    add("tail_dim_features", fu);
  }
  // KV cache: kv_offset tokens already cached, the new ones attend with bottom-right alignment.
  for (auto [sq, off] : {std::pair{1, 99}, std::pair{4, 96}, std::pair{10, 90}, std::pair{40, 60}}) {
    AttnProblem p = make_problem(2, 4, 2, sq, off + sq, 64);
    p.kv_offset = off;
    p.causal = Causal::bottom_right;
    add("kv_offset", p);
  }
  // Top-left causal: more queries than keys (rows with no key) and fewer.
  for (auto [sq, sk] : {std::pair{40, 20}, std::pair{20, 40}, std::pair{3, 9}}) {
    AttnProblem p = make_problem(1, 2, 1, sq, sk, 64);
    p.causal = Causal::top_left;
    add("causal_top_left", p);
  }
  // Bottom-right with more queries than keys: the first rows see nothing.
  for (int sq : {3, 50}) {
    AttnProblem p = make_problem(1, 2, 1, sq, 2, 64);
    p.causal = Causal::bottom_right;
    add("empty_rows", p);
  }
  // Per-batch key lengths, zeros included (padded caches / varlen).
  for (int sq : {1, 5, 20})
    for (Causal c : {Causal::none, Causal::bottom_right}) {
      AttnProblem p = make_problem(3, 2, 1, sq, 100, 64);
      p.causal = c;
      p.seqlens_k = {0, 37, 100};
      add("seqlens", p);
    }
  // Sliding windows (left, right), with and without causal.
  for (auto [wl, wr] : {std::pair{4, 0}, std::pair{16, 16}, std::pair{0, 0}, std::pair{32, -1}, std::pair{-1, 8}})
    for (int sq : {1, 6, 40}) {
      AttnProblem p = make_problem(1, 2, 1, sq, 129, 64);
      p.window_left = wl;
      p.window_right = wr;
      p.causal = wr == 0 ? Causal::bottom_right : Causal::none;
      add("window", p);
    }
  // Soft-cap (scores pushed into the tanh's bend by larger inputs) and ALiBi.
  for (double cap : {5.0, 30.0})
    for (int sq : {1, 40}) {
      AttnProblem p = make_problem(1, 4, 2, sq, 90, 64);
      p.softcap = cap;
      p.causal = Causal::bottom_right;
      add("softcap", p, InputDist{3.0, -1});
    }
  for (int sq : {1, 40})
    for (Causal c : {Causal::none, Causal::bottom_right}) {
      AttnProblem p = make_problem(2, 4, 2, sq, 90, 64);
      p.alibi_slopes = alibi(4);
      p.causal = c;
      add("alibi", p);
    }
  {
    AttnProblem p = make_problem(1, 4, 1, 40, 130, 64);
    p.alibi_slopes = alibi(4);
    p.softcap = 20;
    p.window_left = 50;
    p.causal = Causal::bottom_right;
    p.scale = 0.3;
    add("all_features", p, InputDist{2.0, -1});
    p.sq = 3;
    add("all_features", p, InputDist{2.0, -1});
  }
  // Layouts: BHSD, a fused QKV buffer [B, S, 3, H, D] (q, k, v share strides), padded O.
  for (int sq : {1, 33}) {
    AttnProblem p = make_problem(2, 3, 3, sq, 70, 64);
    p.with_layout(TensorLayout::bhsd);
    add("bhsd", p);
    AttnProblem f = make_problem(2, 3, 3, sq, sq, 64);
    const std::int64_t row = 3LL * f.hq * f.d;
    f.q = f.k = f.v = Strides{row * sq, row, f.d, 1};
    f.causal = Causal::bottom_right;
    add("fused_qkv", f);
    AttnProblem o = make_problem(1, 2, 1, sq, 70, 64);
    o.o = Strides{std::int64_t{sq} * 2 * 80, 2 * 80, 80, 1};  // head stride 80 > dv: gaps in O
    add("padded_o", o);
    // K and V of different layouts: K in BSHD with padded rows, V in BHSD in a cache with room for
    // 16 more keys (a kernel that addresses V with K's strides reads other rows).
    AttnProblem kv = make_problem(2, 2, 2, sq, 70, 64);
    kv.k = Strides{70LL * 2 * 72, 2 * 72, 72, 1};
    kv.v = Strides{2LL * 86 * 64, 64, 86 * 64, 1};
    add("kv_layouts", kv);
  }
  // Long rows: the row sum gets large (fp16 accumulation shows), many tiles pass through shared memory.
  for (int sq : {1, 64}) {
    AttnProblem p = make_problem(1, 2, 1, sq, 2048, 64);
    add("long_row", p, InputDist{0.5, -1});
  }
  {
    AttnProblem p = make_problem(1, 2, 1, 4, 1000, 64);  // nearly identical keys: a nearly uniform softmax
    add("near_uniform", p, InputDist{1.0, 0.01});
    p.sq = 48;
    add("near_uniform", p, InputDist{1.0, 0.01});
  }
  // K/V rows off 16-byte alignment (head stride d + 1): kernels that read 16-byte vectors fall back
  // to element loads (decode's fallback gives bitwise the aligned result: test_kernels_gpu).
  for (int sq : {1, 6, 40}) {
    AttnProblem u = make_problem(2, 8, 2, sq, 300, 128);
    u.k = u.v = Strides{300LL * 2 * 129, 2 * 129, 129, 1};
    u.causal = Causal::bottom_right;
    add("unaligned_kv", u);
  }
  return g;
}

}  // namespace

AttnProblem GridCase::with_dtype(DType t) const {
  AttnProblem q = p;
  q.dtype = t;
  // Mixed output types on a few features: bf16 in -> f32 out, f32 in -> bf16 out.
  if (feature == "padded_o" && t == DType::bf16) q.out_dtype = DType::f32;
  else if (feature == "padded_o" && t == DType::f32) q.out_dtype = DType::bf16;
  else q.out_dtype = t;
  return q;
}

const std::vector<GridCase>& kernel_grid() {
  static const std::vector<GridCase> g = build();
  return g;
}

std::vector<GridPath> grid_paths(const KernelInfo& k, const DeviceInfo& dev, const std::vector<AttnProblem>& ran) {
  std::vector<GridPath> paths;
  for (const gate::KernelPath& path : gate::kernel_paths(k, dev)) {
    GridPath g{path.name};
    for (const AttnProblem& p : ran) g.cases += path.takes(p);
    paths.push_back(g);
  }
  return paths;
}

}  // namespace flashprobe::kernels::testing
