// The device side of the counter-based input fill (input_fill.h): one thread per element, the
// element's bits from counter_rng.h's functions, the ones the host runs.
#include <cstdint>

#include "flashprobe/core/counter_rng.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/input_fill.h"

namespace flashprobe::kernels {
namespace {

constexpr int kFillThreads = 256;

struct FillArgs {
  counter_rng::Spec spec;
  void* t[3];
  std::int64_t n[3];  // elements per tensor (Q, K, V)
  const std::int32_t* table;
  int batch, sk, hkv, d;
  std::int64_t ks[4];  // K's strides (b, s, h, x)
};

// Pass 1: the plain draw of every element of the three spans (one grid over their concatenation).
template <class Bits>
__global__ __launch_bounds__(kFillThreads) void fill_plain_kernel(FillArgs a) {
  const std::int64_t total = a.n[0] + a.n[1] + a.n[2];
  for (std::int64_t e = std::int64_t{blockIdx.x} * kFillThreads + threadIdx.x; e < total;
       e += std::int64_t{gridDim.x} * kFillThreads) {
    const int t = e < a.n[0] ? 0 : e < a.n[0] + a.n[1] ? 1 : 2;
    const std::int64_t i = t == 0 ? e : t == 1 ? e - a.n[0] : e - a.n[0] - a.n[1];
    const double mag = t == 2 ? 1.0 : a.spec.magnitude;
    static_cast<Bits*>(a.t[t])[i] =
        static_cast<Bits>(counter_rng::plain_bits(a.spec, static_cast<std::uint32_t>(t), static_cast<std::uint64_t>(i), mag, a.table));
  }
}

// Pass 2: K's logical elements under the key kind (near-identical or rising keys).
template <class Bits>
__global__ __launch_bounds__(kFillThreads) void fill_keys_kernel(FillArgs a) {
  const std::int64_t total = std::int64_t{a.batch} * a.sk * a.hkv * a.d;
  for (std::int64_t e = std::int64_t{blockIdx.x} * kFillThreads + threadIdx.x; e < total;
       e += std::int64_t{gridDim.x} * kFillThreads) {
    const int x = static_cast<int>(e % a.d);
    const std::int64_t h = (e / a.d) % a.hkv, j = (e / (std::int64_t{a.d} * a.hkv)) % a.sk,
                       b = e / (std::int64_t{a.d} * a.hkv * a.sk);
    const std::int64_t i = b * a.ks[0] + j * a.ks[1] + h * a.ks[2] + x * a.ks[3];
    static_cast<Bits*>(a.t[1])[i] = static_cast<Bits>(counter_rng::key_bits(a.spec, static_cast<std::uint64_t>(i), j, x, a.table));
  }
}

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kFillThreads - 1) / kFillThreads;
  return static_cast<unsigned>(b < 65536 ? (b > 0 ? b : 1) : 65536);  // grid-stride past 16M elements
}

template <class Bits>
void launch(const FillArgs& a, Stream stream) {
  const std::int64_t total = a.n[0] + a.n[1] + a.n[2];
  if (total > 0) {
    fill_plain_kernel<Bits><<<blocks_for(total), kFillThreads, 0, stream>>>(a);
    FP_CHECK_LAUNCH("fill_plain_kernel");
  }
  const std::int64_t keys = std::int64_t{a.batch} * a.sk * a.hkv * a.d;
  if (counter_rng::keys_have_kind(a.spec) && keys > 0) {
    fill_keys_kernel<Bits><<<blocks_for(keys), kFillThreads, 0, stream>>>(a);
    FP_CHECK_LAUNCH("fill_keys_kernel");
  }
}

}  // namespace

void launch_input_fill(const AttnProblem& p, const counter_rng::Spec& s, const InputFillTensors& t, Stream stream) {
  require_valid(p);
  if (!t.table) throw UsageError("launch_input_fill needs the device copy of the quantile table (InputFillTensors::table)");
  const Strides ks = p.k_strides();
  FillArgs a{s, {t.q, t.k, t.v}, {p.q_span(), p.k_span(), p.v_span()}, t.table, p.batch, p.sk, p.hkv, p.d,
             {ks.b, ks.s, ks.h, ks.d}};
  if (dtype_size(p.dtype) == 4) launch<std::uint32_t>(a, stream);
  else launch<std::uint16_t>(a, stream);
}

}  // namespace flashprobe::kernels
