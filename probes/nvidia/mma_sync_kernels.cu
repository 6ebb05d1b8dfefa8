// Experiment kernels for the mma.sync atoms: one experiment per warp, read A/B/C per (experiment,
// lane, slot), pack them into the PTX register order, run the instruction, write D per slot.
#include <cstdint>

#include "device_io.h"
#include "elements.cuh"
#include "exact.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/probes/nvidia/executors.h"
#include "mma_sm80.cuh"

namespace flashprobe::nvidia {
namespace {

constexpr int kWarpsPerBlock = 4;

template <class Op>
struct OpTraits;
template <>
struct OpTraits<SM80_16x8x16_F32F16F16F32_TN> {
  static constexpr Elem kIn = Elem::f16;
  static constexpr int kA = 8, kB = 4;
  using Acc = float;
};
template <>
struct OpTraits<SM80_16x8x16_F32BF16BF16F32_TN> {
  static constexpr Elem kIn = Elem::bf16;
  static constexpr int kA = 8, kB = 4;
  using Acc = float;
};
template <>
struct OpTraits<SM80_16x8x8_F32F16F16F32_TN> {
  static constexpr Elem kIn = Elem::f16;
  static constexpr int kA = 4, kB = 2;
  using Acc = float;
};
template <>
struct OpTraits<SM80_16x8x32_S32S8S8S32_TN> {
  static constexpr Elem kIn = Elem::s8;
  static constexpr int kA = 16, kB = 8;
  using Acc = std::int32_t;
};
constexpr int kC = 4;  // every m16n8 accumulator: four per lane

template <class Op>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    mma_sync_experiments(int experiments, const float* a, const float* b, const float* c, float* d) {
  using T = OpTraits<Op>;
  const long long e = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (e >= experiments) return;  // whole warps leave together: blockDim is a multiple of 32
  const long long lane_index = e * 32 + fp_dev::lane_id();
  constexpr int kPerReg = T::kIn == Elem::s8 ? 4 : 2;
  float av[T::kA], bv[T::kB];
  for (int i = 0; i < T::kA; ++i) av[i] = a[lane_index * T::kA + i];
  for (int i = 0; i < T::kB; ++i) bv[i] = b[lane_index * T::kB + i];
  std::uint32_t ar[T::kA / kPerReg], br[T::kB / kPerReg];
  for (int r = 0; r < T::kA / kPerReg; ++r) ar[r] = pack_register<T::kIn>(av, r);
  for (int r = 0; r < T::kB / kPerReg; ++r) br[r] = pack_register<T::kIn>(bv, r);
  typename T::Acc cr[kC], dr[kC];
  for (int i = 0; i < kC; ++i) cr[i] = static_cast<typename T::Acc>(c[lane_index * kC + i]);
  Op::fma(dr, ar, br, cr);
  for (int i = 0; i < kC; ++i) d[lane_index * kC + i] = static_cast<float>(dr[i]);
}

template <class Op>
void launch(int experiments, std::span<const float> a, std::span<const float> b, std::span<const float> c,
            std::span<float> d, ExactKind in_kind, ExactKind acc_kind, const char* op_name) {
  using T = OpTraits<Op>;
  const std::string what = op_name;
  const std::size_t lanes = static_cast<std::size_t>(experiments) * 32;
  require_size(a, lanes * T::kA, what + " A");
  require_size(b, lanes * T::kB, what + " B");
  require_size(c, lanes * kC, what + " C");
  if (d.size() != lanes * kC) throw UsageError(what + " D has the wrong size");
  require_exact(in_kind, a, what + " A");
  require_exact(in_kind, b, what + " B");
  require_exact(acc_kind, c, what + " C");
  auto da = detail::to_device(a), db = detail::to_device(b), dc = detail::to_device(c);
  auto dd = detail::output_buffer(d.size_bytes());
  mma_sync_experiments<Op><<<detail::blocks_for(experiments, kWarpsPerBlock), 32 * kWarpsPerBlock>>>(
      experiments, da.as<float>(), db.as<float>(), dc.as<float>(), dd.as<float>());
  FP_CHECK_LAUNCH(op_name);
  detail::from_device(dd, d, what);
}

}  // namespace

const char* name(MmaSyncOp op) {
  switch (op) {
    case MmaSyncOp::m16n8k16_f16: return "SM80_16x8x16_F32F16F16F32_TN";
    case MmaSyncOp::m16n8k16_bf16: return "SM80_16x8x16_F32BF16BF16F32_TN";
    case MmaSyncOp::m16n8k8_f16: return "SM80_16x8x8_F32F16F16F32_TN";
    case MmaSyncOp::m16n8k32_s8: return "SM80_16x8x32_S32S8S8S32_TN";
  }
  return "?";
}

Slots mma_sync_slots(MmaSyncOp op) {
  switch (op) {
    case MmaSyncOp::m16n8k16_f16:
    case MmaSyncOp::m16n8k16_bf16: return {32, 8, 4, kC};
    case MmaSyncOp::m16n8k8_f16: return {32, 4, 2, kC};
    case MmaSyncOp::m16n8k32_s8: return {32, 16, 8, kC};
  }
  return {};
}

void run_mma_sync(MmaSyncOp op, int experiments, std::span<const float> a, std::span<const float> b,
                  std::span<const float> c, std::span<float> d) {
  if (experiments <= 0) throw UsageError("run_mma_sync: experiments must be positive");
  switch (op) {
    case MmaSyncOp::m16n8k16_f16:
      return launch<SM80_16x8x16_F32F16F16F32_TN>(experiments, a, b, c, d, ExactKind::f16, ExactKind::f32, name(op));
    case MmaSyncOp::m16n8k16_bf16:
      return launch<SM80_16x8x16_F32BF16BF16F32_TN>(experiments, a, b, c, d, ExactKind::bf16, ExactKind::f32,
                                                    name(op));
    case MmaSyncOp::m16n8k8_f16:
      return launch<SM80_16x8x8_F32F16F16F32_TN>(experiments, a, b, c, d, ExactKind::f16, ExactKind::f32, name(op));
    case MmaSyncOp::m16n8k32_s8:
      return launch<SM80_16x8x32_S32S8S8S32_TN>(experiments, a, b, c, d, ExactKind::s8, ExactKind::s32, name(op));
  }
}

}  // namespace flashprobe::nvidia
