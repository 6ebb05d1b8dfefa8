#pragma once
// Layout maps measured on the device through the NVIDIA executors (executors.h): for each operand,
// the table (lane, slot) -> (row, col) the hardware produced, with every value that did not decode
// listed as an anomaly (never rounded away).
//
//   auto m = flashprobe::nvidia::derive_ldmatrix({4, false});
//   m(5, 2)  // (row, col) of the stacked 32x8 address matrix that lane 5's register 1 low half holds
//
// These are load-path and warpgroup probes; the register-only semantic probing of mma.sync and
// wmma::mma_sync is the vendor-neutral engine's job (probes/), driven through run_mma_sync /
// run_wmma_mma.
#include <string>
#include <vector>

#include "flashprobe/probes/nvidia/executors.h"

namespace flashprobe::nvidia {

struct Coord {
  int row = -1;  // -1: the slot held nothing decodable (see the map's anomalies)
  int col = -1;
  friend bool operator==(const Coord&, const Coord&) = default;
};

struct OperandMap {
  std::string what;  // what was measured and how, e.g. "A of SM80_WMMA_16x16x16_F32F16F16F32_TN via load_matrix_sync"
  int lanes = 32, slots = 0, rows = 0, cols = 0;
  std::vector<Coord> at;               // at[lane * slots + slot]
  std::vector<std::string> anomalies;  // values that decoded to no (row, col), with lane and slot
  Coord& operator()(int lane, int slot) { return at[static_cast<std::size_t>(lane) * slots + slot]; }
  const Coord& operator()(int lane, int slot) const { return at[static_cast<std::size_t>(lane) * slots + slot]; }
};

// ldmatrix: memory is the stacked (8 * matrices) x 8 matrix whose row r is the 16-byte row whose
// address thread r supplies. The experiment gives thread t the address of shared row 31 - t, so a
// row used from a thread outside 0..8*matrices-1 shows up (as row >= 8 * matrices, an anomaly).
OperandMap derive_ldmatrix(const LdmatrixConfig& cfg);

// wmma load_matrix_sync: two launches' worth of experiments in one (value = row + 1, value = col + 1),
// exact in f16, bf16 and f32 for every tile here (<= 32 rows/cols).
OperandMap derive_wmma_load(const WmmaConfig& cfg, WmmaOperand op, Major acc_layout = Major::row);
// wmma store_matrix_sync of the accumulator: x[i] of lane l holds l * slots + i + 1; each stored
// element names the slot it came from. Slots whose value was never stored stay (-1, -1) (a slot
// that replicates another and lost the write would look like this; f32 accumulators have none).
OperandMap derive_wmma_store(const WmmaConfig& cfg, Major layout);

// wgmma m64nNk16: D (thread, slot) -> (m, n), absolute, from A and B in shared memory with known
// (documented, descriptor-described) layouts: A[m][k] = m + 1 with B = 1 gives m; A = 1 with
// B[k][n] = n + 1 gives n (each core-matrix row constant over its 8 k values, so only the m/n
// placement of core-matrix rows matters). For the RS form additionally: n again with A registers
// all ones (layout independent), and the A register map (thread, slot) -> (m, k) from one
// experiment per A slot: that slot one-hot, B[k][n] = k + 1; the lit D slots give m through the
// D map and their value gives k.
struct WgmmaMaps {
  OperandMap d;
  OperandMap a;  // RS only: empty (slots 0) for SS
};
WgmmaMaps derive_wgmma(const WgmmaConfig& cfg);

}  // namespace flashprobe::nvidia
