// The rounding-bias criterion of the tolerance model: a bf16 output rounded toward zero (the
// truncation bug) stays within every max-abs bound — its error is at most one ulp — but its mean
// signed error is about -0.5 ulp, which check() reports; the same values rounded to nearest pass.
#include <gtest/gtest.h>

#include <cstring>

#include "flashprobe/core/half.h"
#include "flashprobe/oracle/check.h"

using namespace flashprobe;

namespace {
AttnOutputs outputs_from(const AttnProblem& p, const oracle::Reference& r, bool truncate) {
  AttnOutputs out{Tensor(p.out_dtype, p.o_span()), {}};
  const Strides os = p.o_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) {
          const double v = r.o[r.o_index(p, b, i, h, x)];
          const std::int64_t at = offset(os, b, i, h, x);
          if (truncate) {
            const std::uint16_t bits = to_bf16_bits_truncate(static_cast<float>(v));
            std::memcpy(out.o.bytes.data() + 2 * at, &bits, 2);
          } else {
            out.o.set(at, static_cast<float>(v));
          }
        }
  out.lse.assign(r.lse.begin(), r.lse.end());
  return out;
}
}  // namespace

TEST(ToleranceBias, TruncatedBf16OutputFailsAndRoundedOutputPasses) {
  AttnProblem p;
  p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 33; p.sk = 97; p.d = p.dv = 64;
  p.dtype = p.out_dtype = DType::bf16;
  p.causal = Causal::bottom_right;
  const AttnInputs in = random_inputs(p, 11);
  // The emulated low-precision result (P rounded, fp32 accumulation) stands in for a correct kernel.
  AttnProblem f32out = p;
  f32out.out_dtype = DType::f32;
  const oracle::Reference emu = oracle::emulate_low_precision(f32out, in);
  const auto good = oracle::check(p, in, outputs_from(p, emu, false));
  EXPECT_TRUE(good.pass) << good.summary();
  EXPECT_LT(std::abs(good.o_metrics.bias_ulp), 0.1);
  const auto bad = oracle::check(p, in, outputs_from(p, emu, true));
  EXPECT_FALSE(bad.pass) << bad.summary();
  EXPECT_LT(bad.o_metrics.bias_ulp, -0.3);
  EXPECT_NE(bad.reason.find("biased"), std::string::npos) << bad.reason;
  EXPECT_LE(bad.o_margin, 1.0) << "the max-abs bound alone would have let truncation pass: " << bad.summary();
}
