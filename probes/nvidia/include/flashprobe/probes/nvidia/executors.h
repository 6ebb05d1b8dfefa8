#pragma once
// Real NVIDIA matrix instructions, run in batches: the hardware side of the layout probes.
//
// Each executor runs many independent experiments in one launch, one experiment per warp (per
// warpgroup of 128 threads for wgmma). Operands are flat host arrays indexed
// [experiment][lane][slot], where "slot" is the element index within the lane's fragment in the
// PTX ISA's numbering (a0..a7 of mma.m16n8k16's A, x[i] of an nvcuda::wmma fragment, d0..d(N/2-1)
// of a wgmma accumulator). Values travel as float and are converted on the device to the
// instruction's element type; the caller must pass values that type stores exactly (integers of
// small magnitude: |v| <= 256 in bf16, <= 2048 in f16, -128..127 in s8). The launchers check this
// and throw UsageError naming the first bad value, so a probe never measures a rounded input.
//
// Worked example: the accumulator rows of mma.m16n8k16 lane 5, slot 2 (a2) via one experiment:
//   using namespace flashprobe::nvidia;
//   const auto s = mma_sync_slots(MmaSyncOp::m16n8k16_f16);      // {32 lanes, 8, 4, 4}
//   std::vector<float> a(32 * s.a), b(32 * s.b, 1.0f), c(32 * s.c), d(32 * s.c);
//   a[5 * s.a + 2] = 1;                                           // one-hot A slot
//   run_mma_sync(MmaSyncOp::m16n8k16_f16, 1, a, b, c, d);
//   // d[lane * 4 + i] == 1 exactly where D row == row of a2 in lane 5 (row 9: groupID 1, +8)
//
// Load paths (wmma load/store_matrix_sync, ldmatrix) move encoded matrices between memory and
// fragments so that memory (row, col) <-> (lane, slot) is read off directly.
//
// All functions need a CUDA device; without one they throw NoDevice. Device code is in the .cu
// files next to this folder; these are plain C++ signatures (no CUDA types).
#include <cstdint>
#include <span>
#include <string>

#include "flashprobe/core/dtype.h"

namespace flashprobe {
struct DeviceInfo;
}

namespace flashprobe::nvidia {

// Elements per lane of each operand (d has c's shape). `lanes` is 32, or 128 for wgmma.
struct Slots {
  int lanes = 32;
  int a = 0;  // 0 when A comes from shared memory (wgmma SS)
  int b = 0;  // 0 when B comes from shared memory (wgmma)
  int c = 0;
};

// ---------------------------------------------------------------------------------------------
// mma.sync (sm_80+): the four PTX forms the registry declares (flashprobe/atoms/sm80_mma.cuh).
enum class MmaSyncOp {
  m16n8k16_f16,   // SM80_16x8x16_F32F16F16F32_TN
  m16n8k16_bf16,  // SM80_16x8x16_F32BF16BF16F32_TN
  m16n8k8_f16,    // SM80_16x8x8_F32F16F16F32_TN
  m16n8k32_s8,    // SM80_16x8x32_S32S8S8S32_TN (C and D are s32, passed as float: exact below 2^24)
};
const char* name(MmaSyncOp op);  // the CuTe-style name above
Slots mma_sync_slots(MmaSyncOp op);
// d[e][lane][i] = slot i of lane's D after D = A*B + C for experiment e.
void run_mma_sync(MmaSyncOp op, int experiments, std::span<const float> a, std::span<const float> b,
                  std::span<const float> c, std::span<float> d);

// ---------------------------------------------------------------------------------------------
// nvcuda::wmma (sm_70+ API, compiled for sm_80/sm_90): fragments whose element order NVIDIA
// leaves unspecified. Slot i is fragment.x[i]; a fragment may hold more elements than its share
// of the tile (replicas).
enum class WmmaShape { m16n16k16, m32n8k16, m8n32k16 };
enum class Major { row, col };
enum class WmmaOperand { a, b, accumulator };
struct WmmaConfig {
  WmmaShape shape = WmmaShape::m16n16k16;
  DType in = DType::f16;  // f16 or bf16; accumulators are f32
  Major a = Major::row;   // wmma::row_major / col_major of matrix_a
  Major b = Major::col;   // of matrix_b
};
struct Mnk {
  int m, n, k;
};
Mnk wmma_mnk(WmmaShape s);
const char* name(WmmaShape s);  // "m16n16k16"
// The atom name of the engine's registry: SM80_WMMA_16x16x16_F32F16F16F32_TN (A row-major = T,
// B column-major = N, as in CuTe's TN).
std::string name(const WmmaConfig& cfg);
// Fragment element counts (num_elements, as compiled for the device's architecture; measured on
// the device, so a toolkit whose fragments differ per architecture is seen as it is).
Slots wmma_slots(const WmmaConfig& cfg);
// Semantic path: D = mma_sync(A, B, C) with the fragments' x[i] given per lane.
void run_wmma_mma(const WmmaConfig& cfg, int experiments, std::span<const float> a, std::span<const float> b,
                  std::span<const float> c, std::span<float> d);
// Load path: `mem` holds per experiment one logical matrix, row-major on the host, rows x cols of
// the operand (A: M x K, B: K x N, accumulator: M x N). The kernel lays it out in global memory in
// the operand's major order (cfg.a, cfg.b, or `acc_layout` for the accumulator; leading dimension
// = the tile's cols/rows), calls load_matrix_sync and writes x[i] per lane to frag[e][lane][i].
void run_wmma_load(const WmmaConfig& cfg, WmmaOperand op, Major acc_layout, int experiments,
                   std::span<const float> mem, std::span<float> frag);
// Store path (accumulator): frag[e][lane][i] -> x[i], store_matrix_sync in `layout`, and the
// stored matrix comes back logical row-major M x N in mem[e]. Elements no lane stored stay NaN.
void run_wmma_store(const WmmaConfig& cfg, Major layout, int experiments, std::span<const float> frag,
                    std::span<float> mem);

// ---------------------------------------------------------------------------------------------
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16 (sm_75+).
// Per experiment, shared memory holds 32 rows of 8 b16 values (16 bytes per row); thread t passes
// the address of row row_of_thread[t] (only threads 0..8*matrices-1 are documented to matter).
// regs[e][lane][j] is the raw 32-bit register j (of `matrices`) of lane; the low half is the
// first element.
struct LdmatrixConfig {
  int matrices = 1;  // 1, 2 or 4
  bool trans = false;
};
std::string name(const LdmatrixConfig& cfg);       // the wrapper: SM75_U32x4_LDSM_N / SM75_U16x8_LDSM_T
std::string atom_name(const LdmatrixConfig& cfg);  // the registry's: SM75_LDMATRIX_X4_B16 / ..._TRANS
void run_ldmatrix(const LdmatrixConfig& cfg, int experiments, std::span<const std::uint16_t> rows,
                  std::span<const int> row_of_thread, std::span<std::uint32_t> regs);

// ---------------------------------------------------------------------------------------------
// wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 (sm_90a only), one warpgroup per experiment.
// A: from registers (a[e][thread][8], the PTX a0..a7 of the thread's four .f16x2 registers) or
// from shared memory (a[e][64][16], the logical M x K matrix; the kernel writes it K-major in the
// no-swizzle core-matrix layout its descriptor names). B: always shared memory, b[e][16][N]
// logical K x N, written K-major (each 16-byte core-matrix row = one n, 8 consecutive k).
// C/D: c[e][thread][N/2] and d likewise.
inline constexpr int kWgmmaN[] = {8, 16, 64, 128, 256};
struct WgmmaConfig {
  int n = 8;
  bool a_from_smem = false;
};
std::string name(const WgmmaConfig& cfg);  // SM90_64x8x16_F32F16F16_RS / _SS
Slots wgmma_slots(const WgmmaConfig& cfg);
// Whether this device runs the sm_90a code (compute capability 9.0 exactly; wgmma does not exist
// on sm_80/sm_89 and sm_100 has no sm_90a binary compatibility). `why` says why not.
bool wgmma_supported(const DeviceInfo& dev, std::string* why = nullptr);
// Throws UsageError (the CLI exits 2) with the device's arch when !wgmma_supported.
void require_wgmma(const DeviceInfo& dev, const std::string& atom_name);
void run_wgmma(const WgmmaConfig& cfg, int experiments, std::span<const float> a, std::span<const float> b,
               std::span<const float> c, std::span<float> d);

}  // namespace flashprobe::nvidia
