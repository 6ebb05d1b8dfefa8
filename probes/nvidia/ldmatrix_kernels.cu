// Experiment kernel for ldmatrix: per warp, 32 rows of 8 b16 values go to shared memory; thread t
// passes the address of row row_of_thread[t]; the registers come back raw.
#include <cstdint>

#include "device_io.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/probes/nvidia/executors.h"
#include "flashprobe/atoms/sm75_ldmatrix.cuh"

namespace flashprobe::nvidia {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kRows = 32, kRowElems = 8;  // 16-byte rows: ldmatrix's row size for b16

template <class Op>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    ldmatrix_experiments(int experiments, const std::uint16_t* rows, const int* row_of_thread, std::uint32_t* regs) {
  // 16-byte aligned rows, as ldmatrix requires.
  __shared__ alignas(16) std::uint16_t smem[kWarpsPerBlock][kRows * kRowElems];
  const int w = fp_dev::wave_id();
  const long long e = static_cast<long long>(blockIdx.x) * kWarpsPerBlock + w;
  if (e >= experiments) return;
  const int lane = fp_dev::lane_id();
  for (int i = lane; i < kRows * kRowElems; i += 32) smem[w][i] = rows[e * kRows * kRowElems + i];
  __syncwarp();
  const int row = row_of_thread[e * 32 + lane];
  std::uint32_t r[Op::kMatrices];
  Op::copy(&smem[w][row * kRowElems], r);
  for (int j = 0; j < Op::kMatrices; ++j) regs[(e * 32 + lane) * Op::kMatrices + j] = r[j];
}

template <class Op>
void launch(int experiments, std::span<const std::uint16_t> rows, std::span<const int> row_of_thread,
            std::span<std::uint32_t> regs, const std::string& what) {
  if (rows.size() != static_cast<std::size_t>(experiments) * kRows * kRowElems ||
      row_of_thread.size() != static_cast<std::size_t>(experiments) * 32 ||
      regs.size() != static_cast<std::size_t>(experiments) * 32 * Op::kMatrices)
    throw UsageError(what + ": rows, row_of_thread or regs has the wrong size for " + std::to_string(experiments) +
                     " experiments");
  for (std::size_t i = 0; i < row_of_thread.size(); ++i)
    if (row_of_thread[i] < 0 || row_of_thread[i] >= kRows)
      throw UsageError(what + ": row_of_thread[" + std::to_string(i) + "] = " + std::to_string(row_of_thread[i]) +
                       " is not a row index 0..31");
  auto drows = detail::to_device(rows);
  auto dthr = detail::to_device(row_of_thread);
  auto dregs = detail::output_buffer(regs.size_bytes());
  ldmatrix_experiments<Op><<<detail::blocks_for(experiments, kWarpsPerBlock), 32 * kWarpsPerBlock>>>(
      experiments, drows.as<std::uint16_t>(), dthr.as<int>(), dregs.as<std::uint32_t>());
  FP_CHECK_LAUNCH("ldmatrix_experiments");
  detail::from_device(dregs, regs, what);
}

}  // namespace

std::string name(const LdmatrixConfig& cfg) {
  if (cfg.trans) return "SM75_U16x" + std::to_string(2 * cfg.matrices) + "_LDSM_T";
  return "SM75_U32x" + std::to_string(cfg.matrices) + "_LDSM_N";
}

std::string atom_name(const LdmatrixConfig& cfg) {
  return "SM75_LDMATRIX_X" + std::to_string(cfg.matrices) + "_B16" + (cfg.trans ? "_TRANS" : "");
}

void run_ldmatrix(const LdmatrixConfig& cfg, int experiments, std::span<const std::uint16_t> rows,
                  std::span<const int> row_of_thread, std::span<std::uint32_t> regs) {
  if (experiments <= 0) throw UsageError("run_ldmatrix: experiments must be positive");
  const std::string what = name(cfg);
  switch (cfg.matrices * 2 + (cfg.trans ? 1 : 0)) {
    case 2: return launch<SM75_U32x1_LDSM_N>(experiments, rows, row_of_thread, regs, what);
    case 4: return launch<SM75_U32x2_LDSM_N>(experiments, rows, row_of_thread, regs, what);
    case 8: return launch<SM75_U32x4_LDSM_N>(experiments, rows, row_of_thread, regs, what);
    case 3: return launch<SM75_U16x2_LDSM_T>(experiments, rows, row_of_thread, regs, what);
    case 5: return launch<SM75_U16x4_LDSM_T>(experiments, rows, row_of_thread, regs, what);
    case 9: return launch<SM75_U16x8_LDSM_T>(experiments, rows, row_of_thread, regs, what);
  }
  throw UsageError("ldmatrix: " + std::to_string(cfg.matrices) + " matrices is not one of 1, 2, 4");
}

}  // namespace flashprobe::nvidia
