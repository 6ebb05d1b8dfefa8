// The backward kernels' table, dispatcher and poison accounting (host code; the kernels themselves
// run in test_backward_gpu).
#include <gtest/gtest.h>

#include "flashprobe/core/buffer.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/mutants.h"
#include "src/bwd_params.h"

namespace flashprobe::kernels {
namespace {

DeviceInfo device(const std::string& vendor, const std::string& arch, int wave) {
  DeviceInfo d;
  d.vendor = vendor;
  d.arch = arch;
  d.wave_size = wave;
  return d;
}
const BinaryTargets kCuda{"nvidia", {"80", "90"}}, kHip{"amd", {"gfx942"}};

AttnProblem prob(int d) {
  AttnProblem p;
  p.batch = 2; p.hq = 6; p.hkv = 2; p.sq = 33; p.sk = 70; p.d = p.dv = d;
  return p;
}

TEST(BackwardSelect, AtomicFirstDeterministicWhenAsked) {
  const DeviceInfo h100 = device("nvidia", "sm_90", 32);
  const BackwardSelection fast = select_backward(h100, prob(128), false, kCuda, backward_kernels());
  ASSERT_TRUE(fast) << fast.describe();
  EXPECT_EQ(fast.kernel->name, "tiled_bwd");
  const BackwardSelection det = select_backward(h100, prob(128), true, kCuda, backward_kernels());
  ASSERT_TRUE(det) << det.describe();
  EXPECT_EQ(det.kernel->name, "tiled_bwd_det");
  EXPECT_TRUE(det.kernel->deterministic);
  ASSERT_EQ(det.rejected.size(), 1u);
  EXPECT_NE(det.rejected[0].reason.find("atomics"), std::string::npos);
  const BackwardSelection amd = select_backward(device("amd", "gfx942", 64), prob(64), true, kHip, backward_kernels());
  EXPECT_TRUE(amd) << amd.describe();
}

TEST(BackwardSelect, HeadDimsAboveTheLimitAndWrongBinariesAreRefusedWithReasons) {
  const DeviceInfo h100 = device("nvidia", "sm_90", 32);
  for (int d : {1, 59, 200, 256}) EXPECT_TRUE(select_backward(h100, prob(d), false, kCuda, backward_kernels())) << d;
  const BackwardSelection big = select_backward(h100, prob(257), false, kCuda, backward_kernels());
  EXPECT_FALSE(big);
  EXPECT_NE(big.describe().find("d=257"), std::string::npos) << big.describe();
  const BackwardSelection amd = select_backward(device("amd", "gfx1100", 32), prob(64), false, kCuda, backward_kernels());
  EXPECT_FALSE(amd);
  EXPECT_NE(amd.reason.find("gfx1100"), std::string::npos) << amd.reason;
  AttnProblem bad = prob(64);
  bad.hkv = 4;  // hq = 6 is not a multiple
  EXPECT_FALSE(select_backward(h100, bad, false, kCuda, backward_kernels()));
}

TEST(BackwardSelect, WorkspaceIsTheRowTermPlusTheAtomicDqBuffer) {
  const AttnProblem p = prob(64);
  const std::size_t rows = 2 * 6 * 33;
  EXPECT_EQ(find_backward_kernel("tiled_bwd_det")->workspace_bytes(p), rows * 4);
  EXPECT_EQ(find_backward_kernel("tiled_bwd")->workspace_bytes(p), rows * 4 * 65);
  EXPECT_EQ(find_backward_kernel("nope"), nullptr);
  EXPECT_EQ(backward_kernel_names(), "tiled_bwd, tiled_bwd_det");
}

TEST(BackwardSelect, ParamsNeedEveryPointer) {
  const AttnProblem p = prob(64);
  std::vector<float> ws(backward_workspace_bytes(p, false) / sizeof(float));
  float* dummy = ws.data();
  BwdDeviceTensors t;
  t.fwd = {dummy, dummy, dummy, dummy, dummy, nullptr, nullptr};
  t.dout = dummy;
  t.dq = t.dk = dummy;
  EXPECT_THROW(make_bwd_params(p, t, dummy, true), UsageError);  // dv missing
  t.dv = dummy;
  const BwdParams b = make_bwd_params(p, t, dummy, false);
  EXPECT_EQ(b.dq_acc, dummy + 2 * 6 * 33);
  EXPECT_EQ(make_bwd_params(p, t, dummy, true).dq_acc, nullptr);
  EXPECT_THROW(make_bwd_params(p, t, nullptr, true), UsageError);
}

TEST(BackwardSelect, UnwrittenGradientsAreCountedAtTheirStrides) {
  AttnProblem p = prob(8);
  p.with_layout(TensorLayout::bhsd);
  Tensor dq(p.dtype, p.q_span()), dk(p.dtype, p.k_span()), dv(p.dtype, p.v_span());
  std::string first;
  EXPECT_EQ(count_unwritten_grads(p, dq, dk, dv, &first), 0);
  for (auto* t : {&dq, &dk, &dv}) std::fill(t->bytes.begin(), t->bytes.end(), kPoisonByte);
  EXPECT_EQ(count_unwritten_grads(p, dq, dk, dv, &first), p.q_span() + p.k_span() + p.v_span());
  EXPECT_EQ(first, "dq[b=0,s=0,h=0,x=0]");
  std::fill(dq.bytes.begin(), dq.bytes.end(), 0);
  std::fill(dk.bytes.begin(), dk.bytes.end(), 0);
  dv.set(offset(p.v_strides(), 1, 69, 1, 7), 1.0);
  first.clear();
  EXPECT_EQ(count_unwritten_grads(p, dq, dk, dv, &first), p.v_span() - 1);
  EXPECT_EQ(first, "dv[b=0,s=0,h=0,x=0]");
}

TEST(BackwardSelect, BackwardMutantsMirrorTheCatalogue) {
  std::size_t n = 0;
  for (auto& m : mutant_catalogue()) n += find_backward_kernel(m.kernel) != nullptr;
  ASSERT_EQ(backward_mutants().size(), n);
  EXPECT_EQ(n, 5u);  // issue 27: rowsum D, dQ race, GQA unsummed, soft-cap derivative, causal in backward only
  for (auto& m : backward_mutants()) {
    EXPECT_EQ(m.kernel.name, "mutant/" + m.meta.name);
    EXPECT_EQ(find_backward_kernel(m.kernel.name), nullptr);
  }
}

}  // namespace
}  // namespace flashprobe::kernels
