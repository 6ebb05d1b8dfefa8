// Exactness of operand values in the AMD element types (host side of elements.h).
#include <cmath>
#include <sstream>

#include "flashprobe/core/half.h"
#include "flashprobe/probes/amd/elements.h"
#include "flashprobe/probes/amd/run.h"

namespace flashprobe::probes::amd {

float round_to_elem(AmdElem elem, float x) {
  switch (elem) {
    case AmdElem::f16: return static_cast<float>(from_f16_bits(to_f16_bits(x)));
    case AmdElem::bf16: return fp_amd::bf16_value(fp_amd::bf16_bits(x));
    case AmdElem::fp8_e4m3fnuz: return fp_amd::e4m3fnuz_value(fp_amd::e4m3fnuz_bits(x));
    case AmdElem::fp8_e4m3: return fp_amd::e4m3_value(fp_amd::e4m3_bits(x));
    case AmdElem::bf8_e5m2fnuz: return fp_amd::e5m2fnuz_value(fp_amd::e5m2fnuz_bits(x));
    case AmdElem::bf8_e5m2: return fp_amd::e5m2_value(fp_amd::e5m2_bits(x));
    case AmdElem::f32: return x;
  }
  return x;
}

std::optional<std::string> first_inexact(AmdElem elem, std::span<const float> values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    const float r = round_to_elem(elem, v);
    // NaN never round-trips by comparison; -0 in FNUZ fp8 becomes +0, which the probe must not send.
    if (!(r == v) || std::signbit(r) != std::signbit(v)) {
      std::ostringstream s;
      s << "index " << i << ": value " << v << " is not exact in " << amd_elem_name(elem) << " (nearest " << r << ")";
      return s.str();
    }
  }
  return std::nullopt;
}

}  // namespace flashprobe::probes::amd
