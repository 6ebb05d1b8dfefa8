// Experiment kernels for nvcuda::wmma: the semantic path (mma_sync on fragments whose x[i] are
// set per lane) and the load/store paths (load_matrix_sync / store_matrix_sync of encoded
// matrices). NVIDIA documents the fragment element order as unspecified; these kernels make no
// assumption about it and only move x[i] <-> flat arrays.
#include <mma.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "device_io.h"
#include "exact.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/probes/nvidia/executors.h"

namespace flashprobe::nvidia {
namespace {

namespace wmma = nvcuda::wmma;
constexpr int kWarpsPerBlock = 4;

template <class T>
FP_DEV T from_float(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else return __float2bfloat16_rn(v);
}
template <class T>
FP_DEV float to_float(T v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else return __bfloat162float(v);
}

template <class Frag>
FP_DEV void fill(Frag& f, const float* src) {
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = from_float<std::remove_reference_t<decltype(f.x[0])>>(src[i]);
}
template <class Frag>
FP_DEV void dump(const Frag& f, float* dst) {
  for (int i = 0; i < f.num_elements; ++i) dst[i] = to_float(f.x[i]);
}

template <int M, int N, int K, class T, class LA, class LB>
struct Frags {
  using A = wmma::fragment<wmma::matrix_a, M, N, K, T, LA>;
  using B = wmma::fragment<wmma::matrix_b, M, N, K, T, LB>;
  using C = wmma::fragment<wmma::accumulator, M, N, K, float>;
};

FP_DEV long long experiment_index() { return (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; }

template <int M, int N, int K, class T, class LA, class LB>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    wmma_mma_experiments(int experiments, const float* a, const float* b, const float* c, float* d) {
  using F = Frags<M, N, K, T, LA, LB>;
  const long long e = experiment_index();
  if (e >= experiments) return;
  const long long lane = e * 32 + fp_dev::lane_id();
  typename F::A fa;
  typename F::B fb;
  typename F::C fc, fd;
  fill(fa, a + lane * fa.num_elements);
  fill(fb, b + lane * fb.num_elements);
  fill(fc, c + lane * fc.num_elements);
  wmma::mma_sync(fd, fa, fb, fc);
  dump(fd, d + lane * fd.num_elements);
}

// Fragment sizes as compiled for the running device.
template <int M, int N, int K, class T, class LA, class LB>
__global__ void wmma_sizes(int* out) {
  using F = Frags<M, N, K, T, LA, LB>;
  out[0] = F::A::num_elements;
  out[1] = F::B::num_elements;
  out[2] = F::C::num_elements;
}

// Load path for matrix_a / matrix_b: mem holds the operand in the fragment's own major order.
template <class Frag, class ElemT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    wmma_load_operand(int experiments, const ElemT* mem, int tile_elems, int ldm, float* frag) {
  const long long e = experiment_index();
  if (e >= experiments) return;
  Frag f;
  wmma::load_matrix_sync(f, mem + e * tile_elems, ldm);
  dump(f, frag + (e * 32 + fp_dev::lane_id()) * f.num_elements);
}

template <class Frag>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    wmma_load_accumulator(int experiments, const float* mem, int tile_elems, int ldm, bool row_major, float* frag) {
  const long long e = experiment_index();
  if (e >= experiments) return;
  Frag f;
  wmma::load_matrix_sync(f, mem + e * tile_elems, ldm, row_major ? wmma::mem_row_major : wmma::mem_col_major);
  dump(f, frag + (e * 32 + fp_dev::lane_id()) * f.num_elements);
}

template <class Frag>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    wmma_store_accumulator(int experiments, const float* frag, int tile_elems, int ldm, bool row_major, float* mem) {
  const long long e = experiment_index();
  if (e >= experiments) return;
  Frag f;
  fill(f, frag + (e * 32 + fp_dev::lane_id()) * f.num_elements);
  wmma::store_matrix_sync(mem + e * tile_elems, f, ldm, row_major ? wmma::mem_row_major : wmma::mem_col_major);
}

// The logical row-major matrix rows x cols (per experiment) laid out in `major` order.
template <class Out, class Convert>
std::vector<Out> to_major(std::span<const float> logical, int experiments, int rows, int cols, Major major,
                          Convert convert) {
  std::vector<Out> out(logical.size());
  const long long tile = static_cast<long long>(rows) * cols;
  for (long long e = 0; e < experiments; ++e)
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const long long dst = major == Major::row ? r * cols + c : c * rows + r;
        out[e * tile + dst] = convert(logical[e * tile + r * cols + c]);
      }
  return out;
}

template <class T>
T host_convert(float v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return v;
}

// Calls f.template operator()<M, N, K, T, LA, LB>() for the configuration: the one place the
// runtime configuration becomes template arguments.
template <class F>
void dispatch(const WmmaConfig& cfg, F&& f) {
  auto with_t = [&]<int M, int N, int K, class LA, class LB>() {
    if (cfg.in == DType::f16) f.template operator()<M, N, K, __half, LA, LB>();
    else if (cfg.in == DType::bf16) f.template operator()<M, N, K, __nv_bfloat16, LA, LB>();
    else throw UsageError(std::string("wmma input type ") + std::string(dtype_name(cfg.in)) +
                          " is not supported (f16 or bf16)");
  };
  auto with_b = [&]<int M, int N, int K, class LA>() {
    if (cfg.b == Major::row) with_t.template operator()<M, N, K, LA, wmma::row_major>();
    else with_t.template operator()<M, N, K, LA, wmma::col_major>();
  };
  auto with_a = [&]<int M, int N, int K>() {
    if (cfg.a == Major::row) with_b.template operator()<M, N, K, wmma::row_major>();
    else with_b.template operator()<M, N, K, wmma::col_major>();
  };
  switch (cfg.shape) {
    case WmmaShape::m16n16k16: return with_a.template operator()<16, 16, 16>();
    case WmmaShape::m32n8k16: return with_a.template operator()<32, 8, 16>();
    case WmmaShape::m8n32k16: return with_a.template operator()<8, 32, 16>();
  }
}

ExactKind exact_kind(DType t) { return t == DType::bf16 ? ExactKind::bf16 : ExactKind::f16; }

}  // namespace

Mnk wmma_mnk(WmmaShape s) {
  switch (s) {
    case WmmaShape::m16n16k16: return {16, 16, 16};
    case WmmaShape::m32n8k16: return {32, 8, 16};
    case WmmaShape::m8n32k16: return {8, 32, 16};
  }
  return {0, 0, 0};
}

const char* name(WmmaShape s) {
  switch (s) {
    case WmmaShape::m16n16k16: return "m16n16k16";
    case WmmaShape::m32n8k16: return "m32n8k16";
    case WmmaShape::m8n32k16: return "m8n32k16";
  }
  return "?";
}

std::string name(const WmmaConfig& cfg) {
  const auto s = wmma_mnk(cfg.shape);
  const std::string in = cfg.in == DType::bf16 ? "_F32BF16BF16F32_" : "_F32F16F16F32_";
  // CuTe/BLAS majorness letters, as in the engine's registry: A row-major = T, B column-major = N.
  return "SM80_WMMA_" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + in +
         (cfg.a == Major::row ? "T" : "N") + (cfg.b == Major::col ? "N" : "T");
}

Slots wmma_slots(const WmmaConfig& cfg) {
  Slots s;
  dispatch(cfg, [&]<int M, int N, int K, class T, class LA, class LB>() {
    auto buf = detail::output_buffer(3 * sizeof(int));
    wmma_sizes<M, N, K, T, LA, LB><<<1, 1>>>(buf.as<int>());
    FP_CHECK_LAUNCH("wmma_sizes");
    int n[3];
    detail::from_device(buf, std::span<int>(n, 3), "wmma_sizes");
    s = Slots{32, n[0], n[1], n[2]};
  });
  return s;
}

void run_wmma_mma(const WmmaConfig& cfg, int experiments, std::span<const float> a, std::span<const float> b,
                  std::span<const float> c, std::span<float> d) {
  if (experiments <= 0) throw UsageError("run_wmma_mma: experiments must be positive");
  const auto slots = wmma_slots(cfg);
  const std::string what = name(cfg);
  const std::size_t lanes = static_cast<std::size_t>(experiments) * 32;
  require_size(a, lanes * slots.a, what + " A");
  require_size(b, lanes * slots.b, what + " B");
  require_size(c, lanes * slots.c, what + " C");
  if (d.size() != lanes * slots.c) throw UsageError(what + " D has the wrong size");
  require_exact(exact_kind(cfg.in), a, what + " A");
  require_exact(exact_kind(cfg.in), b, what + " B");
  require_exact(ExactKind::f32, c, what + " C");
  dispatch(cfg, [&]<int M, int N, int K, class T, class LA, class LB>() {
    auto da = detail::to_device(a), db = detail::to_device(b), dc = detail::to_device(c);
    auto dd = detail::output_buffer(d.size_bytes());
    wmma_mma_experiments<M, N, K, T, LA, LB><<<detail::blocks_for(experiments, kWarpsPerBlock), 32 * kWarpsPerBlock>>>(
        experiments, da.as<float>(), db.as<float>(), dc.as<float>(), dd.as<float>());
    FP_CHECK_LAUNCH("wmma_mma_experiments");
    detail::from_device(dd, d, what);
  });
}

void run_wmma_load(const WmmaConfig& cfg, WmmaOperand op, Major acc_layout, int experiments,
                   std::span<const float> mem, std::span<float> frag) {
  if (experiments <= 0) throw UsageError("run_wmma_load: experiments must be positive");
  const auto slots = wmma_slots(cfg);
  const auto s = wmma_mnk(cfg.shape);
  const int rows = op == WmmaOperand::b ? s.k : s.m;
  const int cols = op == WmmaOperand::a ? s.k : s.n;
  const int per_lane = op == WmmaOperand::a ? slots.a : op == WmmaOperand::b ? slots.b : slots.c;
  const std::string what = name(cfg) + (op == WmmaOperand::a ? " load A" : op == WmmaOperand::b ? " load B" : " load C");
  require_size(mem, static_cast<std::size_t>(experiments) * rows * cols, what);
  if (frag.size() != static_cast<std::size_t>(experiments) * 32 * per_lane)
    throw UsageError(what + ": fragment output has the wrong size");
  require_exact(op == WmmaOperand::accumulator ? ExactKind::f32 : exact_kind(cfg.in), mem, what);
  const int tile = rows * cols;
  const Major major = op == WmmaOperand::a ? cfg.a : op == WmmaOperand::b ? cfg.b : acc_layout;
  const int ldm = major == Major::row ? cols : rows;
  const int blocks = detail::blocks_for(experiments, kWarpsPerBlock);
  auto dfrag = detail::output_buffer(frag.size_bytes());
  dispatch(cfg, [&]<int M, int N, int K, class T, class LA, class LB>() {
    using F = Frags<M, N, K, T, LA, LB>;
    if (op == WmmaOperand::accumulator) {
      const auto host = to_major<float>(mem, experiments, rows, cols, major, host_convert<float>);
      auto dmem = detail::to_device(std::span<const float>(host));
      wmma_load_accumulator<typename F::C><<<blocks, 32 * kWarpsPerBlock>>>(
          experiments, dmem.as<float>(), tile, ldm, major == Major::row, dfrag.as<float>());
      FP_CHECK_LAUNCH("wmma_load_accumulator");
      detail::from_device(dfrag, frag, what);
      return;
    }
    const auto host = to_major<T>(mem, experiments, rows, cols, major, host_convert<T>);
    auto dmem = detail::to_device(std::span<const T>(host));
    if (op == WmmaOperand::a)
      wmma_load_operand<typename F::A, T><<<blocks, 32 * kWarpsPerBlock>>>(experiments, dmem.template as<T>(), tile, ldm,
                                                                           dfrag.as<float>());
    else
      wmma_load_operand<typename F::B, T><<<blocks, 32 * kWarpsPerBlock>>>(experiments, dmem.template as<T>(), tile, ldm,
                                                                           dfrag.as<float>());
    FP_CHECK_LAUNCH("wmma_load_operand");
    detail::from_device(dfrag, frag, what);
  });
}

void run_wmma_store(const WmmaConfig& cfg, Major layout, int experiments, std::span<const float> frag,
                    std::span<float> mem) {
  if (experiments <= 0) throw UsageError("run_wmma_store: experiments must be positive");
  const auto slots = wmma_slots(cfg);
  const auto s = wmma_mnk(cfg.shape);
  const std::string what = name(cfg) + " store C";
  require_size(frag, static_cast<std::size_t>(experiments) * 32 * slots.c, what);
  require_exact(ExactKind::f32, frag, what);
  const int tile = s.m * s.n;
  if (mem.size() != static_cast<std::size_t>(experiments) * tile) throw UsageError(what + ": memory output has the wrong size");
  const int ldm = layout == Major::row ? s.n : s.m;
  dispatch(cfg, [&]<int M, int N, int K, class T, class LA, class LB>() {
    using F = Frags<M, N, K, T, LA, LB>;
    auto dfrag = detail::to_device(frag);
    auto dmem = detail::output_buffer(mem.size_bytes());
    wmma_store_accumulator<typename F::C><<<detail::blocks_for(experiments, kWarpsPerBlock), 32 * kWarpsPerBlock>>>(
        experiments, dfrag.as<float>(), tile, ldm, layout == Major::row, dmem.as<float>());
    FP_CHECK_LAUNCH("wmma_store_accumulator");
    std::vector<float> stored(mem.size());
    detail::from_device(dmem, std::span<float>(stored), what);
    // Back to logical row-major.
    for (long long e = 0; e < experiments; ++e)
      for (int r = 0; r < s.m; ++r)
        for (int c = 0; c < s.n; ++c)
          mem[e * tile + r * s.n + c] = stored[e * tile + (layout == Major::row ? r * s.n + c : c * s.m + r)];
  });
}

}  // namespace flashprobe::nvidia
