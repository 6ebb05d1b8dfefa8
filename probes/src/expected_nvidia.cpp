// NVIDIA atoms: mma.sync (sm_80+), wgmma (sm_90a), nvcuda::wmma (no documented layout), ldmatrix.
//
// mma.sync fragments follow the PTX ISA section "Warp-level Matrix Fragment Mma"/"Matrix Fragments
// for mma.m16n8k*": with groupID = laneid >> 2 and threadID_in_group = laneid % 4, element a_i / b_i /
// c_i of a thread sits at the row/col the section gives. Written here with g = lane >> 2, t = lane & 3:
//   m16n8k16 f16/bf16  A a0..a7: row = g + 8*((i>>1)&1), col = 2t + (i&1) + 8*(i>>2)
//                      B b0..b3: row = 2t + (i&1) + 8*(i>>1), col = g
//                      C c0..c3: row = g + 8*(i>>1), col = 2t + (i&1)
//   m16n8k8  f16       A a0..a3: row = g + 8*(i>>1), col = 2t + (i&1);  B b0,b1: row = 2t + i, col = g
//   m16n8k32 s8        A a0..a15: row = g + 8*((i>>2)&1), col = 4t + (i&3) + 16*(i>>3)
//                      B b0..b7: row = 4t + (i&3) + 16*(i>>2), col = g
// (cross-checked against CUTLASS cute/atom/mma_traits_sm80.hpp ALayout/BLayout/CLayout.)
#include "expected_common.h"

namespace flashprobe::probes::detail {

namespace {
const char* kPtx = "NVIDIA PTX ISA (parallel-thread-execution), 8.x";

OperandLayout c_16x8(int lanes = 32) {
  return table(16, 8, lanes, 4, [](int lane, int i) {
    const int g = lane >> 2, t = lane & 3;
    return Coord{g + 8 * (i >> 1), 2 * t + (i & 1)};
  });
}

MmaLayout m16n8k16() {
  return {table(16, 16, 32, 8,
                [](int lane, int i) {
                  const int g = lane >> 2, t = lane & 3;
                  return Coord{g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
                }),
          table(16, 8, 32, 4,
                [](int lane, int i) {
                  const int g = lane >> 2, t = lane & 3;
                  return Coord{2 * t + (i & 1) + 8 * (i >> 1), g};
                }),
          c_16x8()};
}

MmaLayout m16n8k8() {
  return {table(16, 8, 32, 4,
                [](int lane, int i) {
                  const int g = lane >> 2, t = lane & 3;
                  return Coord{g + 8 * (i >> 1), 2 * t + (i & 1)};
                }),
          table(8, 8, 32, 2, [](int lane, int i) { return Coord{2 * (lane & 3) + i, lane >> 2}; }), c_16x8()};
}

MmaLayout m16n8k32_s8() {
  return {table(16, 32, 32, 16,
                [](int lane, int i) {
                  const int g = lane >> 2, t = lane & 3;
                  return Coord{g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
                }),
          table(32, 8, 32, 8,
                [](int lane, int i) {
                  const int g = lane >> 2, t = lane & 3;
                  return Coord{4 * t + (i & 3) + 16 * (i >> 2), g};
                }),
          c_16x8()};
}

// wgmma.mma_async m64nNk16, a warpgroup of 128 threads; warp w = lane >> 5 owns rows 16w..16w+15.
MmaLayout wgmma(int n) {
  auto a = table(64, 16, 128, 8, [](int lane, int i) {
    const int w = lane >> 5, g = (lane & 31) >> 2, t = lane & 3;
    return Coord{16 * w + g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
  });
  // B is read from shared memory through a matrix descriptor: it has no register layout. The
  // executor stages it from the [lane][slot] array in this order (flashprobe's convention, K-major:
  // element e = lane * (N/8) + slot is B[k = e % 16][n = e / 16]); the probe checks the staging.
  const int bs = n / 8;
  auto b = table(16, n, 128, bs, [bs](int lane, int i) {
    const int e = lane * bs + i;
    return Coord{e % 16, e / 16};
  });
  auto c = table(64, n, 128, n / 2, [](int lane, int i) {
    const int w = lane >> 5, g = (lane & 31) >> 2, t = lane & 3;
    return Coord{16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)};
  });
  return {a, b, c};
}

AtomDesc mma_atom(std::string name, std::vector<std::string> targets, int m, int n, int k, ElemType ab, ElemType c,
                  int wave, int as, int bs, int cs, std::optional<MmaLayout> layout, Source src, std::string notes) {
  AtomDesc d;
  d.name = std::move(name);
  d.vendor = Vendor::nvidia;
  d.targets = std::move(targets);
  d.m = m;
  d.n = n;
  d.k = k;
  d.a_type = d.b_type = ab;
  d.c_type = c;
  d.wave = wave;
  d.a_slots = as;
  d.b_slots = bs;
  d.c_slots = cs;
  d.expected = std::move(layout);
  d.source = std::move(src);
  d.notes = std::move(notes);
  return d;
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: matrix j (rows 8j..8j+7 of the loaded
// stack) lands in register j of every thread; a register packs two b16 elements (slots 2j, 2j+1).
LoadAtomDesc ldmatrix(int x, bool trans) {
  LoadAtomDesc d;
  d.name = "SM75_LDMATRIX_X" + std::to_string(x) + "_B16" + (trans ? "_TRANS" : "");
  d.vendor = Vendor::nvidia;
  d.targets = {"sm_75", "sm_80", "sm_90"};
  d.rows = 8 * x;
  d.cols = 8;
  d.type = ElemType::f16;
  d.wave = 32;
  d.slots = 2 * x;
  d.expected = table(8 * x, 8, 32, 2 * x, [trans](int lane, int s) {
    const int j = s >> 1, h = s & 1;
    return trans ? Coord{8 * j + 2 * (lane & 3) + h, lane >> 2} : Coord{8 * j + (lane >> 2), 2 * (lane & 3) + h};
  });
  d.source = {kPtx, "Data Movement and Conversion Instructions: ldmatrix (fragment layout figures)"};
  d.notes = "threads 8j..8j+7 supply the row addresses of matrix j (x1: threads 0-7, x2: 0-15, x4: 0-31); "
            "memory rows 8j.. of the loaded stack are matrix j";
  return d;
}
}  // namespace

void add_nvidia_atoms(std::vector<AtomDesc>& mma, std::vector<LoadAtomDesc>& load) {
  const std::vector<std::string> sm80{"sm_80", "sm_86", "sm_89", "sm_90"};
  mma.push_back(mma_atom("SM80_16x8x16_F32F16F16F32_TN", sm80, 16, 8, 16, ElemType::f16, ElemType::f32, 32, 8, 4, 4,
                         m16n8k16(), {kPtx, "Matrix Fragments for mma.m16n8k16 with floating point type"},
                         "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
  mma.push_back(mma_atom("SM80_16x8x16_F32BF16BF16F32_TN", sm80, 16, 8, 16, ElemType::bf16, ElemType::f32, 32, 8, 4,
                         4, m16n8k16(), {kPtx, "Matrix Fragments for mma.m16n8k16 with floating point type"},
                         "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; same layout as f16"));
  mma.push_back(mma_atom("SM80_16x8x8_F32F16F16F32_TN", sm80, 16, 8, 8, ElemType::f16, ElemType::f32, 32, 4, 2, 4,
                         m16n8k8(), {kPtx, "Matrix Fragments for mma.m16n8k8 (.f16 and .bf16)"},
                         "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"));
  mma.push_back(mma_atom("SM80_16x8x32_S32S8S8S32_TN", sm80, 16, 8, 32, ElemType::s8, ElemType::s32, 32, 16, 8, 4,
                         m16n8k32_s8(), {kPtx, "Matrix Fragments for mma.m16n8k32 (.s8/.u8)"},
                         "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32; 4 s8 per 32-bit register"));
  for (int n : {8, 16, 64, 128, 256})
    mma.push_back(mma_atom(
        "SM90_64x" + std::to_string(n) + "x16_F32F16F16_RS", {"sm_90a"}, 64, n, 16, ElemType::f16, ElemType::f32, 128,
        8, n / 8, n / 2, wgmma(n),
        {kPtx, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate: Register Fragments (wgmma .m64nNk16: "
               "matrix A in registers, accumulator D)"},
        "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
            "k16.f32.f16.f16, A from registers; B is a shared-memory operand: its 'layout' is the executor's "
            "staging order (K-major: slot e = lane*(N/8)+slot holds B[e%16][e/16]), not a hardware layout"));
  // nvcuda::wmma: CUDA states the fragment element mapping is unspecified. Slots per lane are the
  // fragments' num_elements from CUDA's mma.h; the layout is what the probe will find (issue #5).
  struct W {
    int m, n, k, a16, b16, abf, bbf;
  };
  for (W w : {W{16, 16, 16, 16, 16, 8, 8}, W{32, 8, 16, 16, 16, 16, 4}, W{8, 32, 16, 16, 16, 4, 16}})
    for (bool bf : {false, true})
      for (const char* major : {"TN", "NN", "TT", "NT"}) {
        const std::string shape = std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k);
        mma.push_back(mma_atom(
            "SM80_WMMA_" + shape + (bf ? "_F32BF16BF16F32_" : "_F32F16F16F32_") + major, sm80, w.m, w.n, w.k,
            bf ? ElemType::bf16 : ElemType::f16, ElemType::f32, 32, bf ? w.abf : w.a16, bf ? w.bbf : w.b16, 8,
            std::nullopt, {},
            std::string("nvcuda::wmma fragments, matrix_a ") + (major[0] == 'T' ? "row_major" : "col_major") +
                ", matrix_b " + (major[1] == 'N' ? "col_major" : "row_major") +
                "; the element-to-position mapping is unspecified by NVIDIA; slots = fragment num_elements"));
      }
  for (int x : {1, 2, 4})
    for (bool t : {false, true}) load.push_back(ldmatrix(x, t));
}

}  // namespace flashprobe::probes::detail
