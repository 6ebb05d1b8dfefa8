#include "arrays.h"

#include <cstring>
#include <memory>

#include "flashprobe/core/error.h"

namespace flashprobe::python {

namespace {

namespace dl = nb::dlpack;

bool is_bhsd(const Strides& given, int seq, int heads, int dim) { return layout_name(given, seq, heads, dim) == "bhsd"; }

std::string dims_str(const std::vector<std::int64_t>& v) {
  std::string r = "[";
  for (std::size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + "]";
}

std::string dtype_str(dl::dtype t, bool bf16_view) {
  if (bf16_view) return "bfloat16";
  const std::string bits = std::to_string(t.bits);
  switch (static_cast<dl::dtype_code>(t.code)) {
    case dl::dtype_code::Int: return "int" + bits;
    case dl::dtype_code::UInt: return "uint" + bits;
    case dl::dtype_code::Float: return "float" + bits;
    case dl::dtype_code::Bfloat: return "bfloat" + bits;
    case dl::dtype_code::Bool: return "bool";
    case dl::dtype_code::Complex: return "complex" + bits;
    default: return "a " + bits + "-bit type (DLPack code " + std::to_string(t.code) + ")";
  }
}

bool dtype_fits(dl::dtype t, DType want, bool bf16_view) {
  if (t.lanes != 1) return false;
  const auto code = static_cast<dl::dtype_code>(t.code);
  switch (want) {
    case DType::f16: return !bf16_view && code == dl::dtype_code::Float && t.bits == 16;
    case DType::f32: return !bf16_view && code == dl::dtype_code::Float && t.bits == 32;
    case DType::bf16:
      return t.bits == 16 && (bf16_view || code == dl::dtype_code::Bfloat || code == dl::dtype_code::UInt ||
                              code == dl::dtype_code::Int);
  }
  return false;
}

std::string accepted_for(DType t) {
  switch (t) {
    case DType::f16: return "float16 (numpy.float16, torch.float16)";
    case DType::f32: return "float32 (numpy.float32, torch.float32)";
    case DType::bf16: return "bfloat16 (torch.bfloat16, ml_dtypes.bfloat16) or its 16-bit patterns (uint16, int16)";
  }
  return "?";
}

void require_host(const Array& a, const std::string& what) {
  if (a.device_type() != nb::device::cpu::value)
    throw UsageError(what + " is in device memory (DLPack device type " + std::to_string(a.device_type()) +
                     "): copy it to the host first (flashprobe.check does this for torch tensors)");
}

std::vector<std::int64_t> shape_of(const Array& a) {
  std::vector<std::int64_t> s;
  for (std::size_t i = 0; i < a.ndim(); ++i) s.push_back(static_cast<std::int64_t>(a.shape(i)));
  return s;
}

TensorSpec spec(const char* name, DType t, const char* field, const Strides& given, const Strides& st,
                std::int64_t span, int b, int s, int h, int d) {
  return {name, t, field, st, span, b, s, h, d, is_bhsd(given, s, h, d)};
}

}  // namespace

std::string layout_name(const Strides& given, int seq, int heads, int dim) {
  if (given.is_zero() || given == contiguous_strides(TensorLayout::bshd, seq, heads, dim)) return "bshd";
  return given == contiguous_strides(TensorLayout::bhsd, seq, heads, dim) ? "bhsd" : "strided";
}

TensorSpec q_spec(const AttnProblem& p) {
  return spec("Q", p.dtype, "dtype", p.q, p.q_strides(), p.q_span(), p.batch, p.sq, p.hq, p.d);
}
TensorSpec k_spec(const AttnProblem& p) {
  return spec("K", p.dtype, "dtype", p.k, p.k_strides(), p.k_span(), p.batch, p.sk, p.hkv, p.d);
}
TensorSpec v_spec(const AttnProblem& p) {
  return spec("V", p.dtype, "dtype", p.v, p.v_strides(), p.v_span(), p.batch, p.sk, p.hkv, p.dv);
}
TensorSpec o_spec(const AttnProblem& p) {
  return spec("O", p.out_dtype, "out_dtype", p.o, p.o_strides(), p.o_span(), p.batch, p.sq, p.hq, p.dv);
}

Tensor read_tensor(const Array& a, const TensorSpec& s, bool bf16_view) {
  const std::string what = s.name;
  require_host(a, what);
  const std::vector<std::int64_t> want = s.bhsd ? std::vector<std::int64_t>{s.batch, s.heads, s.seq, s.dim}
                                                : std::vector<std::int64_t>{s.batch, s.seq, s.heads, s.dim};
  const std::string order = s.bhsd ? "[B, H, S, D] (the problem's layout is BHSD for it)" : "[B, S, H, D]";
  if (shape_of(a) != want)
    throw UsageError(what + " has shape " + dims_str(shape_of(a)) + " but the problem needs " + order + " = " +
                     dims_str(want));
  if (!dtype_fits(a.dtype(), s.dtype, bf16_view))
    throw UsageError(what + " is " + dtype_str(a.dtype(), bf16_view) + " but the problem's " + s.dtype_field + " is " +
                     std::string(dtype_name(s.dtype)) + ": give " + accepted_for(s.dtype));
  Tensor out(s.dtype, s.span);
  const std::size_t size = dtype_size(s.dtype);
  const auto* base = static_cast<const std::uint8_t*>(a.data());
  // The array's strides in [B, S, H, D] order (elements).
  const std::int64_t ab = a.stride(0), as = s.bhsd ? a.stride(2) : a.stride(1), ah = s.bhsd ? a.stride(1) : a.stride(2),
                     ad = a.stride(3);
  for (int b = 0; b < s.batch; ++b)
    for (int t = 0; t < s.seq; ++t)
      for (int h = 0; h < s.heads; ++h) {
        const std::uint8_t* src = base + static_cast<std::int64_t>(size) * (b * ab + t * as + h * ah);
        std::uint8_t* dst = out.bytes.data() + size * static_cast<std::size_t>(offset(s.strides, b, t, h, 0));
        if (ad == 1 && s.strides.d == 1) {
          std::memcpy(dst, src, size * static_cast<std::size_t>(s.dim));
          continue;
        }
        for (int x = 0; x < s.dim; ++x)
          std::memcpy(dst + size * static_cast<std::size_t>(x * s.strides.d), src + static_cast<std::int64_t>(size) * x * ad,
                      size);
      }
  return out;
}

std::vector<float> read_lse(const Array& a, const AttnProblem& p) {
  require_host(a, "LSE");
  const std::vector<std::int64_t> want{p.batch, p.hq, p.sq};
  if (shape_of(a) != want)
    throw UsageError("LSE has shape " + dims_str(shape_of(a)) + " but the problem needs [B, Hq, Sq] = " + dims_str(want));
  const dl::dtype t = a.dtype();
  const bool f32 = t == nb::dtype<float>(), f64 = t == nb::dtype<double>();
  if (!f32 && !f64) throw UsageError("LSE is " + dtype_str(t, false) + " but must be float32 (or float64)");
  std::vector<float> out(static_cast<std::size_t>(p.lse_size()));
  const auto* base = static_cast<const std::uint8_t*>(a.data());
  const std::int64_t size = f32 ? 4 : 8;
  std::size_t i = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.hq; ++h)
      for (int r = 0; r < p.sq; ++r) {
        const std::uint8_t* src = base + size * (b * a.stride(0) + h * a.stride(1) + r * a.stride(2));
        if (f32) std::memcpy(&out[i++], src, 4);
        else {
          double v;
          std::memcpy(&v, src, 8);
          out[i++] = static_cast<float>(v);
        }
      }
  return out;
}

nb::tuple tensor_to_numpy(Tensor t, const TensorSpec& s) {
  auto* owned = new Tensor(std::move(t));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  const std::size_t n = static_cast<std::size_t>(owned->size());
  const dl::dtype dt = s.dtype == DType::f32 ? nb::dtype<float>()
                       : s.dtype == DType::f16 ? dl::dtype{static_cast<std::uint8_t>(dl::dtype_code::Float), 16, 1}
                                               : nb::dtype<std::uint16_t>();
  nb::ndarray<nb::numpy> flat(owned->data(), 1, &n, owner, nullptr, dt);
  const nb::tuple shape = nb::make_tuple(s.batch, s.bhsd ? s.heads : s.seq, s.bhsd ? s.seq : s.heads, s.dim);
  const nb::tuple strides = nb::make_tuple(s.strides.b, s.bhsd ? s.strides.h : s.strides.s,
                                           s.bhsd ? s.strides.s : s.strides.h, s.strides.d);
  return nb::make_tuple(flat.cast(), shape, strides);
}

nb::object doubles_to_numpy(std::vector<double> values, std::vector<std::size_t> shape) {
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  nb::ndarray<nb::numpy, double> arr(owned->data(), shape.size(), shape.data(), owner);
  return arr.cast();
}

}  // namespace flashprobe::python
