// Experiment kernels for the mma.sync atoms: one experiment per warp, read A/B/C per (experiment,
// lane, slot), pack them into registers with the atoms' packing, run the atom's own mma() (the one
// the mma kernel calls, flashprobe/atoms/sm80_mma.cuh) with D = C, write D per slot.
#include <cstdint>

#include "device_io.h"
#include "elements.cuh"
#include "exact.h"
#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/atoms/sm80_mma.cuh"
#include "flashprobe/core/device.cuh"
#include "flashprobe/probes/nvidia/executors.h"

namespace flashprobe::nvidia {
namespace {

using atoms::SM80_16x8x16_F32BF16BF16F32_TN;
using atoms::SM80_16x8x16_F32F16F16F32_TN;
using atoms::SM80_16x8x32_S32S8S8S32_TN;
using atoms::SM80_16x8x8_F32F16F16F32_TN;

constexpr int kWarpsPerBlock = 4;

// What the probe needs beside the atom: its input element type and accumulator type.
template <class Atom>
struct OpTraits;
template <>
struct OpTraits<SM80_16x8x16_F32F16F16F32_TN> {
  static constexpr Elem kIn = Elem::f16;
  using Acc = float;
};
template <>
struct OpTraits<SM80_16x8x16_F32BF16BF16F32_TN> {
  static constexpr Elem kIn = Elem::bf16;
  using Acc = float;
};
template <>
struct OpTraits<SM80_16x8x8_F32F16F16F32_TN> {
  static constexpr Elem kIn = Elem::f16;
  using Acc = float;
};
template <>
struct OpTraits<SM80_16x8x32_S32S8S8S32_TN> {
  static constexpr Elem kIn = Elem::s8;
  using Acc = std::int32_t;
};

template <class Atom>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    mma_sync_experiments(int experiments, const float* a, const float* b, const float* c, float* d) {
  using T = OpTraits<Atom>;
  constexpr int kPerReg = T::kIn == Elem::s8 ? 4 : 2;
  const long long e = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (e >= experiments) return;  // whole warps leave together: blockDim is a multiple of 32
  const long long lane_index = e * 32 + fp_dev::lane_id();
  std::uint32_t ar[Atom::kA / kPerReg], br[Atom::kB / kPerReg];
  load_fragment<T::kIn>(a + lane_index * Atom::kA, ar);
  load_fragment<T::kIn>(b + lane_index * Atom::kB, br);
  typename T::Acc dr[Atom::kC];
  for (int i = 0; i < Atom::kC; ++i) dr[i] = static_cast<typename T::Acc>(c[lane_index * Atom::kC + i]);
  Atom::mma(dr, ar, br);
  for (int i = 0; i < Atom::kC; ++i) d[lane_index * Atom::kC + i] = static_cast<float>(dr[i]);
}

template <class Op>
void launch(int experiments, std::span<const float> a, std::span<const float> b, std::span<const float> c,
            std::span<float> d, ExactKind in_kind, ExactKind acc_kind, const char* op_name) {
  const std::string what = op_name;
  const std::size_t lanes = static_cast<std::size_t>(experiments) * 32;
  require_size(a, lanes * Op::kA, what + " A");
  require_size(b, lanes * Op::kB, what + " B");
  require_size(c, lanes * Op::kC, what + " C");
  if (d.size() != lanes * Op::kC) throw UsageError(what + " D has the wrong size");
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
    case MmaSyncOp::m16n8k16_f16: return SM80_16x8x16_F32F16F16F32_TN::kName;
    case MmaSyncOp::m16n8k16_bf16: return SM80_16x8x16_F32BF16BF16F32_TN::kName;
    case MmaSyncOp::m16n8k8_f16: return SM80_16x8x8_F32F16F16F32_TN::kName;
    case MmaSyncOp::m16n8k32_s8: return SM80_16x8x32_S32S8S8S32_TN::kName;
  }
  return "?";
}

namespace {
template <class Atom>
constexpr Slots slots_of() {
  return {Atom::kWave, Atom::kA, Atom::kB, Atom::kC};
}
}  // namespace

Slots mma_sync_slots(MmaSyncOp op) {
  switch (op) {
    case MmaSyncOp::m16n8k16_f16: return slots_of<SM80_16x8x16_F32F16F16F32_TN>();
    case MmaSyncOp::m16n8k16_bf16: return slots_of<SM80_16x8x16_F32BF16BF16F32_TN>();
    case MmaSyncOp::m16n8k8_f16: return slots_of<SM80_16x8x8_F32F16F16F32_TN>();
    case MmaSyncOp::m16n8k32_s8: return slots_of<SM80_16x8x32_S32S8S8S32_TN>();
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
