// NVIDIA atoms: mma.sync (sm_80+), wgmma (sm_90a), nvcuda::wmma (no documented layout), ldmatrix.
// The layouts and target lists are the atom module's (flashprobe/atoms/sm80_layout.h,
// sm90_wgmma_layout.h, sm75_ldmatrix.h, targets.h); this file adds what the registry states beside
// them: names, element types, sources and notes.
#include <type_traits>

#include "expected_common.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/atoms/sm80_layout.h"
#include "flashprobe/atoms/sm90_wgmma_layout.h"
#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::detail {

namespace {
const char* kPtx = "NVIDIA PTX ISA (parallel-thread-execution), 8.x";

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
  d.targets = target_list(atoms::targets::kSm75Ldmatrix);
  d.rows = 8 * x;
  d.cols = 8;
  d.type = ElemType::f16;
  d.wave = 32;
  d.slots = 2 * x;
  switch (x) {
    case 1: d.expected = trans ? load_layout_of<atoms::SM75_LDMATRIX_Layout<1, true>>()
                               : load_layout_of<atoms::SM75_LDMATRIX_Layout<1, false>>(); break;
    case 2: d.expected = trans ? load_layout_of<atoms::SM75_LDMATRIX_Layout<2, true>>()
                               : load_layout_of<atoms::SM75_LDMATRIX_Layout<2, false>>(); break;
    default: d.expected = trans ? load_layout_of<atoms::SM75_LDMATRIX_Layout<4, true>>()
                                : load_layout_of<atoms::SM75_LDMATRIX_Layout<4, false>>(); break;
  }
  d.source = {kPtx, "Data Movement and Conversion Instructions: ldmatrix (fragment layout figures)"};
  d.notes = "threads 8j..8j+7 supply the row addresses of matrix j (x1: threads 0-7, x2: 0-15, x4: 0-31); "
            "memory rows 8j.. of the loaded stack are matrix j";
  return d;
}
}  // namespace

void add_nvidia_atoms(std::vector<AtomDesc>& mma, std::vector<LoadAtomDesc>& load) {
  const std::vector<std::string> sm80 = target_list(atoms::targets::kSm80MmaSync);
  mma.push_back(mma_atom("SM80_16x8x16_F32F16F16F32_TN", sm80, 16, 8, 16, ElemType::f16, ElemType::f32, 32, 8, 4, 4,
                         layout_of<atoms::SM80_16x8x16_Layout>(), {kPtx, "Matrix Fragments for mma.m16n8k16 with floating point type"},
                         "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
  mma.push_back(mma_atom("SM80_16x8x16_F32BF16BF16F32_TN", sm80, 16, 8, 16, ElemType::bf16, ElemType::f32, 32, 8, 4,
                         4, layout_of<atoms::SM80_16x8x16_Layout>(), {kPtx, "Matrix Fragments for mma.m16n8k16 with floating point type"},
                         "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; same layout as f16"));
  mma.push_back(mma_atom("SM80_16x8x8_F32F16F16F32_TN", sm80, 16, 8, 8, ElemType::f16, ElemType::f32, 32, 4, 2, 4,
                         layout_of<atoms::SM80_16x8x8_Layout>(), {kPtx, "Matrix Fragments for mma.m16n8k8 (.f16 and .bf16)"},
                         "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"));
  mma.push_back(mma_atom("SM80_16x8x32_S32S8S8S32_TN", sm80, 16, 8, 32, ElemType::s8, ElemType::s32, 32, 16, 8, 4,
                         layout_of<atoms::SM80_16x8x32_S8_Layout>(), {kPtx, "Matrix Fragments for mma.m16n8k32 (.s8/.u8)"},
                         "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32; 4 s8 per 32-bit register"));
  const auto wgmma = [&]<int n>(std::integral_constant<int, n>) {
    mma.push_back(mma_atom(
        "SM90_64x" + std::to_string(n) + "x16_F32F16F16_RS", target_list(atoms::targets::kSm90aWgmma), 64, n, 16,
        ElemType::f16, ElemType::f32, 128, 8, n / 8, n / 2, layout_of<atoms::SM90_64xNx16_Layout<n>>(),
        {kPtx, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate: Register Fragments (wgmma .m64nNk16: "
               "matrix A in registers, accumulator D)"},
        "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
            "k16.f32.f16.f16, A from registers; B is a shared-memory operand: its 'layout' is the executor's "
            "staging order (K-major: slot e = lane*(N/8)+slot holds B[e%16][e/16]), not a hardware layout"));
  };
  wgmma(std::integral_constant<int, 8>{});
  wgmma(std::integral_constant<int, 16>{});
  wgmma(std::integral_constant<int, 64>{});
  wgmma(std::integral_constant<int, 128>{});
  wgmma(std::integral_constant<int, 256>{});
  // nvcuda::wmma: CUDA states the fragment element mapping is unspecified. Slots per lane are the
  // fragments' num_elements from CUDA's mma.h; the layout is what the probe finds (probes/nvidia/wmma_declared.json).
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
