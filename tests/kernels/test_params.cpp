// Params building, the host runner's poison accounting and the KV-append validation: host logic
// that decides what the kernels see and what a GPU run reports.
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

#include "flashprobe/core/error.h"
#include "flashprobe/gate/stand_in_device.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/kv_append.h"
#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"

namespace flashprobe::kernels {
namespace {

AttnProblem base() {
  AttnProblem p;
  p.batch = 2;
  p.hq = 6;
  p.hkv = 2;
  p.sq = 5;
  p.sk = 9;
  p.d = 80;
  p.dv = 48;
  return p;
}

int dummy;  // any non-null address serves as a "device pointer" for make_params

// The mma kernels keep rows and keys in 32 bits and build their masks from visible_offsets32
// (src/attn_common.cuh), whose open end is -(sq + kOffsetsFar32): kMaxLen32 leaves it inside int, and
// every one of them refuses sq + sk past kMaxLen32, naming both. With the bound at 2^31 - 1025,
// sq = 2^31 - 1100 and sk = 1 passed mma_bwd's check (mma's forward supports() had none) with an open
// end of 2^31 + 64435, past int.
TEST(Params, ThirtyTwoBitKernelsRefuseRowsWhoseMaskOffsetsLeaveInt) {
  EXPECT_LE(std::int64_t{kMaxLen32} + kOffsetsFar32, 2147483647);
  AttnProblem p;
  p.batch = p.hq = p.hkv = 1;
  p.d = p.dv = 64;
  p.sq = 2147483647 - 1100;
  p.sk = 1;
  const std::string sum = "sq + sk = " + std::to_string(std::int64_t{p.sq} + p.sk), bound = std::to_string(kMaxLen32);
  const DeviceInfo h100 = gate::stand_in_h100(), gfx1100 = gate::stand_in_device("amd", "gfx1100", 0, 32);
  int kernels_checked = 0;
  const auto refused = [&](const std::string& name, const Support& s) {
    ++kernels_checked;
    EXPECT_FALSE(s) << name << " takes sq = " << p.sq << ", sk = " << p.sk;
    EXPECT_NE(s.reason.find(sum), std::string::npos) << name << ": " << s.reason;
    EXPECT_NE(s.reason.find(bound), std::string::npos) << name << ": " << s.reason;
  };
  refused("mma on sm_90", find_kernel("mma")->supports(h100, p));
  refused("mma on gfx1100", find_kernel("mma")->supports(gfx1100, p));
  for (const BackwardKernelInfo& k : backward_kernels())
    if (k.name.rfind("mma_bwd", 0) == 0) refused(k.name, k.supports(k.name == "mma_bwd_amd" ? gfx1100 : h100, p));
  EXPECT_GE(kernels_checked, 5);
  // At the bound mma takes it.
  p.sq = kMaxLen32 - 1;
  EXPECT_TRUE(find_kernel("mma")->supports(h100, p)) << find_kernel("mma")->supports(h100, p).reason;
}

TEST(Params, StridesSizesAndScale) {
  AttnProblem p = base();
  p.with_layout(TensorLayout::bhsd);
  const Params r = make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, nullptr, nullptr});
  EXPECT_EQ(r.qs.b, p.q_strides().b);
  EXPECT_EQ(r.qs.h, 5 * 80);  // BHSD: the head stride spans a whole sequence
  EXPECT_EQ(r.qs.s, 80);
  EXPECT_EQ(r.ks.s, 80);
  EXPECT_EQ(r.vs.h, 9 * 48);
  EXPECT_EQ(r.os.d, 1);
  EXPECT_EQ(r.group, 3);
  EXPECT_EQ(r.sq, 5);
  EXPECT_EQ(r.sk, 9);
  EXPECT_EQ(r.dv, 48);
  EXPECT_FLOAT_EQ(r.scale, static_cast<float>(1.0 / std::sqrt(80.0)));
  EXPECT_EQ(r.causal, CausalMode::none);
  EXPECT_EQ(r.alibi, nullptr);
  EXPECT_EQ(r.seqlens, nullptr);
}

// rows16: 16-byte chunks only where every row is aligned and contiguous; a single misaligned
// stride, base or element type turns the flag off for that tensor alone.
TEST(Params, Rows16FlagsFollowAlignmentStridesAndTypes) {
  alignas(16) static std::uint16_t buf[64];
  AttnProblem p;
  p.batch = 2, p.hq = 4, p.hkv = 2, p.sq = 16, p.sk = 24, p.d = p.dv = 64;
  const DeviceTensors t{buf, buf, buf, buf, nullptr, nullptr, nullptr};
  Params r = make_params(p, t);
  EXPECT_TRUE(r.q_rows16 && r.kv_rows16 && r.o_rows16);
  DeviceTensors odd = t;
  odd.k = buf + 1;  // 2 bytes past a 16-byte boundary
  r = make_params(p, odd);
  EXPECT_TRUE(r.q_rows16 && !r.kv_rows16 && r.o_rows16);
  AttnProblem s = p;
  s.v = {s.sk * s.hkv * 68, s.hkv * 68, 68, 1};  // V rows padded to 68 elements: 136 bytes, not 16-aligned
  r = make_params(s, t);
  EXPECT_FALSE(r.kv_rows16);
  EXPECT_TRUE(r.q_rows16);
  s = p;
  s.out_dtype = DType::f32;  // O in another type: element by element
  r = make_params(s, t);
  EXPECT_FALSE(r.o_rows16);
  EXPECT_TRUE(r.kv_rows16);
  s = p;
  s.d = s.dv = 36;  // rows of 72 bytes
  r = make_params(s, t);
  EXPECT_FALSE(r.q_rows16 || r.kv_rows16 || r.o_rows16);
}

TEST(Params, FusedQkvStridesPassThrough) {
  // One [B, S, 3, H, D] buffer: q, k and v are views with the same strides and different bases.
  AttnProblem p = base();
  p.sk = p.sq;
  p.dv = p.d;
  p.hkv = p.hq;
  const std::int64_t row = 3LL * p.hq * p.d;
  p.q = p.k = p.v = {row * p.sq, row, p.d, 1};
  const Params r = make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, nullptr, nullptr});
  EXPECT_EQ(r.qs.s, row);
  EXPECT_EQ(r.ks.b, row * p.sq);
  EXPECT_EQ(r.os.s, std::int64_t{p.hq} * p.dv);  // O stays contiguous BSHD
}

TEST(Params, MaskFeatures) {
  AttnProblem p = base();
  p.causal = Causal::top_left;
  p.window_left = 3;
  p.window_right = 0;
  p.softcap = 30;
  p.scale = 0.25;
  p.kv_offset = 4;  // with sq = 5: every batch element holds 9 keys
  p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625};
  p.seqlens_k = {9, 9};
  const float slopes[6] = {};
  const int lens[2] = {};
  const Params r = make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, slopes, lens});
  EXPECT_EQ(r.causal, CausalMode::top_left);
  EXPECT_EQ(r.window_left, 3);
  EXPECT_EQ(r.window_right, 0);
  EXPECT_FLOAT_EQ(r.softcap, 30.f);
  EXPECT_FLOAT_EQ(r.scale, 0.25f);
  EXPECT_EQ(r.kv_offset, 4);
  EXPECT_EQ(r.alibi, slopes);
  EXPECT_EQ(r.seqlens, lens);
  p.causal = Causal::bottom_right;
  EXPECT_EQ(make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, slopes, lens}).causal, CausalMode::bottom_right);
}

TEST(Params, MissingOrUnexpectedDevicePointersAreUsageErrors) {
  AttnProblem p = base();
  p.alibi_slopes.assign(6, 0.5);
  EXPECT_THROW(make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, nullptr, nullptr}), UsageError);
  p.alibi_slopes.clear();
  const float slopes[6] = {};
  EXPECT_THROW(make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, slopes, nullptr}), UsageError);
  p.seqlens_k = {1, 2};
  try {
    make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, nullptr, nullptr});
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("seqlens_k"), std::string::npos) << e.what();
  }
}

TEST(Params, InvalidProblemIsRejected) {
  AttnProblem p = base();
  p.hq = 5;
  EXPECT_THROW(make_params(p, {&dummy, &dummy, &dummy, &dummy, nullptr, nullptr, nullptr}), UsageError);
}

TEST(Runner, UnwrittenCountsOnlyLogicalElements) {
  // O with a padded head stride: the gaps are not part of O and stay poison legitimately.
  AttnProblem p = base();
  p.out_dtype = DType::bf16;
  p.o = {std::int64_t{p.sq} * p.hq * 64, std::int64_t{p.hq} * 64, 64, 1};  // dv = 48 of 64 used
  Tensor o(p.out_dtype, p.o_span());
  std::memset(o.bytes.data(), 0xFF, o.bytes.size());
  const std::int64_t logical = std::int64_t{p.batch} * p.sq * p.hq * p.dv;
  std::string first;
  EXPECT_EQ(count_unwritten_o(p, o, &first), logical);
  EXPECT_EQ(first, "o[b=0,i=0,h=0,x=0]");
  for (std::int64_t k = 0; k < o.size(); ++k) o.set(k, 0.0);
  o.set(offset(p.o_strides(), 1, 4, 5, 47), 0.0);
  std::memset(o.bytes.data() + 2 * offset(p.o_strides(), 1, 2, 3, 7), 0xFF, 2);
  EXPECT_EQ(count_unwritten_o(p, o, &first), 1);
  EXPECT_EQ(first, "o[b=1,i=2,h=3,x=7]");
  // A written NaN is not poison: only the exact 0xFF pattern counts.
  o.set(offset(p.o_strides(), 1, 2, 3, 7), std::nan(""));
  EXPECT_EQ(count_unwritten_o(p, o), 0);
}

TEST(Runner, UnwrittenLse) {
  AttnProblem p = base();
  std::vector<float> lse(static_cast<std::size_t>(p.lse_size()), -INFINITY);  // empty rows are written as -inf
  std::string first;
  EXPECT_EQ(count_unwritten_lse(p, lse, &first), 0);
  std::memset(&lse[(1 * 6 + 2) * 5 + 3], 0xFF, 4);
  EXPECT_EQ(count_unwritten_lse(p, lse, &first), 1);
  EXPECT_EQ(first, "lse[b=1,h=2,i=3]");
}

TEST(Runner, WithoutGpuItThrowsNoDevice) {
#if defined(FLASHPROBE_BACKEND_OFF)
  AttnProblem p = base();
  p.d = p.dv = 64;
  const AttnInputs in = random_inputs(p, 1);
  EXPECT_THROW(run_kernel(*find_kernel("ref3pass"), p, in), NoDevice);
#else
  GTEST_SKIP() << "GPU build: covered by test_kernels_gpu";
#endif
}

TEST(KvAppend, Validation) {
  KvAppendProblem a;
  a.batch = 2;
  a.hkv = 2;
  a.s_new = 3;
  a.s_cache = 10;
  a.kv_offset = 7;
  EXPECT_TRUE(validate(a).empty());
  a.kv_offset = 8;
  auto e = validate(a);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("offset 8"), std::string::npos) << e[0];
  a.offsets = {7};
  e = validate(a);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("one per batch"), std::string::npos) << e[0];
  a.offsets = {0, 7};
  EXPECT_TRUE(validate(a).empty());
  a.offsets = {-1, 0};
  EXPECT_FALSE(validate(a).empty());
  EXPECT_EQ(a.k_cache_strides().s, 2 * 64);
  EXPECT_EQ(a.k_new_strides().b, 3 * 2 * 64);
}

}  // namespace
}  // namespace flashprobe::kernels
