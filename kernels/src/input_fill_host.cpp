// Host side of the device input fill (input_fill.h): the quantile table's device copy, the guarded
// buffers, the download and the spot checks against the host generator.
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/counter_inputs.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/input_fill.h"

namespace flashprobe::kernels {

namespace {

std::uint32_t bits_at(const Tensor& t, std::int64_t i) {
  std::uint32_t b = 0;
  std::memcpy(&b, t.bytes.data() + static_cast<std::size_t>(i) * dtype_size(t.dtype), dtype_size(t.dtype));
  return b;
}

void require_same(const char* name, const Tensor& t, std::int64_t i, std::uint32_t host) {
  const std::uint32_t dev = bits_at(t, i);
  if (dev != host)
    throw std::logic_error(std::string("the device input fill differs from the host generator at ") + name + "[" +
                           std::to_string(i) + "]: device bits " + std::to_string(dev) + ", host bits " + std::to_string(host) +
                           " (core/counter_rng.h must give the same bits on both)");
}

}  // namespace

void spot_check_counter_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist, const AttnInputs& in,
                               int spot_checks) {
  const counter_rng::Spec s = counter_spec(p, seed, dist);
  const std::int32_t* table = counter_rng::normal_table();
  std::uint64_t pick = seed ^ 0x5bd1e995u;
  const auto next = [&](std::int64_t n) { return static_cast<std::int64_t>(counter_rng::mix64(++pick) % static_cast<std::uint64_t>(n)); };
  const auto plain = [&](const char* name, const Tensor& t, std::uint32_t stream, double mag) {
    const std::int64_t n = t.size();
    for (int c = 0; c < spot_checks && n > 0; ++c) {
      const std::int64_t i = c == 0 ? 0 : c == 1 ? n - 1 : next(n);
      require_same(name, t, i, counter_rng::plain_bits(s, stream, static_cast<std::uint64_t>(i), mag, table));
    }
  };
  plain("q", in.q, counter_rng::kQ, dist.magnitude);
  plain("v", in.v, counter_rng::kV, 1.0);
  if (!counter_rng::keys_have_kind(s)) {
    plain("k", in.k, counter_rng::kK, dist.magnitude);
  } else if (const std::int64_t keys = std::int64_t{p.batch} * p.sk * p.hkv * p.d; keys > 0) {
    const Strides ks = p.k_strides();
    for (int c = 0; c < spot_checks; ++c) {
      const std::int64_t e = c == 0 ? 0 : c == 1 ? keys - 1 : next(keys);
      const int x = static_cast<int>(e % p.d);
      const std::int64_t h = (e / p.d) % p.hkv, j = (e / (std::int64_t{p.d} * p.hkv)) % p.sk, b = e / (std::int64_t{p.d} * p.hkv * p.sk);
      const std::int64_t i = offset(ks, b, j, h, x);
      require_same("k", in.k, i, counter_rng::key_bits(s, static_cast<std::uint64_t>(i), j, x, table));
    }
  }
}

#ifdef FP_HAVE_GPU_RUNTIME
namespace {

// Uploaded once and kept for the process (a static DeviceBuffer would be freed after the runtime's
// own teardown at exit).
const std::int32_t* device_table() {
  static const DeviceBuffer* table = [] {
    auto* b = new DeviceBuffer(counter_rng::kTableSize * sizeof(std::int32_t));
    b->upload(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(counter_rng::normal_table()),
                                            counter_rng::kTableSize * sizeof(std::int32_t)));
    return b;
  }();
  return table->as<const std::int32_t>();
}

}  // namespace

AttnInputs device_counter_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist, int spot_checks) {
  require_valid(p);
  (void)require_device();
  const counter_rng::Spec s = counter_spec(p, seed, dist);
  const std::size_t es = dtype_size(p.dtype);
  DeviceBuffer q(static_cast<std::size_t>(p.q_span()) * es), k(static_cast<std::size_t>(p.k_span()) * es),
      v(static_cast<std::size_t>(p.v_span()) * es);
  q.poison();
  k.poison();
  v.poison();
  launch_input_fill(p, s, {q.data(), k.data(), v.data(), device_table()}, nullptr);
  FP_CHECK(fp_rt::device_synchronize());
  for (auto [name, b] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}})
    if (auto d = b->guard_damage()) throw std::logic_error(std::string("the device input fill wrote outside ") + name + ": " + d->describe());
  AttnInputs in;
  for (auto [dst, b] : {std::pair{&in.q, &q}, {&in.k, &k}, {&in.v, &v}}) {
    dst->dtype = p.dtype;
    dst->bytes = b->download();
  }
  spot_check_counter_inputs(p, seed, dist, in, spot_checks);
  return in;
}

void fill_counter_inputs_at(const AttnProblem& p, std::uint64_t seed, const InputDist& dist, void* q, void* k, void* v) {
  require_valid(p);
  launch_input_fill(p, counter_spec(p, seed, dist), {q, k, v, device_table()}, nullptr);
}

#else

void launch_input_fill(const AttnProblem&, const counter_rng::Spec&, const InputFillTensors&, Stream) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off), the input fill cannot launch");
}

AttnInputs device_counter_inputs(const AttnProblem&, std::uint64_t, const InputDist&, int) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
}

void fill_counter_inputs_at(const AttnProblem&, std::uint64_t, const InputDist&, void*, void*, void*) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off), the input fill cannot launch");
}

#endif

}  // namespace flashprobe::kernels
