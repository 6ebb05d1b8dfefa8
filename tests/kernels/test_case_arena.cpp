// The case arena (kernels/case_arena.h) on host memory (core/device_memory.h's host_memory()), with
// stand-in kernels that are host functions writing through the "device" pointers: that every case
// starts from poison and freshly written guard bands whatever the case before left (a kernel that
// stops writing its output is caught on the case it stops; a band damaged in one case is reported
// there and not carried into the next), that damage, modified inputs and unwritten elements are found
// as run_kernel finds them, that filled inputs come back as the fill wrote them and a fill writing
// outside its tensors is refused, and that the allocation grows and is reused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "../common/test_problem.h"
#include "flashprobe/core/counter_inputs.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/guard.h"
#include "flashprobe/gate/stand_in_device.h"
#include "flashprobe/kernels/case_arena.h"
#include "flashprobe/kernels/input_fill.h"

namespace flashprobe::kernels {
namespace {

using flashprobe::testing::test_problem;

// Every logical O element written as `value` (rounded to the output dtype), every LSE as 0.
void write_outputs(const AttnProblem& p, const DeviceTensors& t, double value) {
  const std::size_t es = dtype_size(p.out_dtype);
  Tensor o(p.out_dtype, p.o_span());
  std::memcpy(o.bytes.data(), t.o, o.bytes.size());
  const Strides s = p.o_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) o.set(offset(s, b, i, h, x), value);
  std::memcpy(t.o, o.bytes.data(), static_cast<std::size_t>(p.o_span()) * es);
  for (std::int64_t i = 0; i < p.lse_size(); ++i) t.lse[i] = 0.0f;
}

using Body = std::function<void(const AttnProblem&, const DeviceTensors&, void* ws)>;
KernelInfo stand_in(Body body, std::size_t ws_bytes = 0) {
  KernelInfo k;
  k.name = "host-stand-in";
  k.supports = [](const DeviceInfo&, const AttnProblem& p) { return Support::valid(p); };
  k.workspace_bytes = [ws_bytes](const AttnProblem&) { return ws_bytes; };
  k.launch = [body](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream) { body(p, t, ws); };
  return k;
}

KernelInfo correct() {
  return stand_in([](const AttnProblem& p, const DeviceTensors& t, void*) { write_outputs(p, t, 0.5); });
}

struct CaseArenaRun : ::testing::Test {
  CaseArena arena{host_memory()};
  const DeviceInfo dev = gate::stand_in_h100();
  AttnProblem p = test_problem(2, 4, 2, 5, 7, 16, DType::f16);
  AttnInputs in = counter_inputs(p, 11);
  RunResult run(const KernelInfo& k) { return run_in_arena(arena, k, dev, p, ArenaInputs::of(in)).run; }
  std::int64_t o_elements() const { return std::int64_t{p.batch} * p.sq * p.hq * p.dv; }
};

TEST_F(CaseArenaRun, CorrectKernelIsCleanAndItsOutputsComeBack) {
  for (int i = 0; i < 3; ++i) {
    const RunResult r = run(correct());
    EXPECT_TRUE(r.clean()) << r.describe();
    EXPECT_EQ(r.out.o.get(0), 0.5);
    EXPECT_EQ(r.out.lse.size(), static_cast<std::size_t>(p.lse_size()));
  }
  EXPECT_EQ(arena.grown(), 1);  // one allocation for every case of the same size
}

// The planted bug the arena must not hide: a kernel that writes its outputs on the first case only.
// Without the per-case poison its second case would read the first case's (correct) outputs.
TEST_F(CaseArenaRun, StaleOutputOfThePreviousCaseIsCaughtOnTheSecondCase) {
  int launches = 0;
  const KernelInfo writes_once = stand_in([&](const AttnProblem& q, const DeviceTensors& t, void*) {
    if (launches++ == 0) write_outputs(q, t, 0.5);
  });
  const RunResult first = run(writes_once);
  EXPECT_TRUE(first.clean()) << first.describe();
  const RunResult second = run(writes_once);
  EXPECT_EQ(second.o_unwritten, o_elements());
  EXPECT_EQ(second.lse_unwritten, p.lse_size());
  EXPECT_EQ(second.first_unwritten, "o[b=0,i=0,h=0,x=0]");
  EXPECT_TRUE(std::isnan(second.out.o.get(0)));
  // A smaller problem after it: the same buffers, poisoned again.
  p = test_problem(1, 2, 1, 3, 4, 16, DType::f16);
  in = counter_inputs(p, 12);
  const RunResult third = run(writes_once);
  EXPECT_EQ(third.o_unwritten, o_elements());
  EXPECT_EQ(arena.grown(), 1);
}

TEST_F(CaseArenaRun, WorkspaceIsPoisonedForEveryCase) {
  constexpr std::size_t kWs = 96;
  int poisoned_at_launch = 0;
  const KernelInfo k = stand_in(
      [&](const AttnProblem& q, const DeviceTensors& t, void* ws) {
        auto* w = static_cast<std::uint8_t*>(ws);
        bool all = true;
        for (std::size_t i = 0; i < kWs; ++i) all = all && w[i] == kPoisonByte;
        poisoned_at_launch += all;
        std::memset(w, 0, kWs);
        write_outputs(q, t, 0.5);
      },
      kWs);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(run(k).clean());
  EXPECT_EQ(poisoned_at_launch, 3);
}

TEST_F(CaseArenaRun, GuardBandsAreReArmedEveryCase) {
  const std::size_t o_bytes = static_cast<std::size_t>(p.o_span()) * dtype_size(p.out_dtype);
  const KernelInfo overflows = stand_in([&](const AttnProblem& q, const DeviceTensors& t, void*) {
    write_outputs(q, t, 0.5);
    static_cast<std::uint8_t*>(t.o)[o_bytes] = 0;  // the first byte after O
  });
  const RunResult bad = run(overflows);
  ASSERT_EQ(bad.guard_damage.size(), 1u) << bad.describe();
  EXPECT_EQ(bad.guard_damage[0].rfind("o: ", 0), 0u) << bad.guard_damage[0];
  EXPECT_NE(bad.guard_damage[0].find("after"), std::string::npos) << bad.guard_damage[0];
  // The next case's bands are whole again: a correct kernel is clean.
  const RunResult good = run(correct());
  EXPECT_TRUE(good.clean()) << good.describe();
  // An underflow of Q (an input) on a later case is found there.
  const KernelInfo underflows = stand_in([](const AttnProblem& q, const DeviceTensors& t, void*) {
    write_outputs(q, t, 0.5);
    static_cast<std::uint8_t*>(const_cast<void*>(t.q))[-1] = 0;
  });
  const RunResult under = run(underflows);
  ASSERT_EQ(under.guard_damage.size(), 1u) << under.describe();
  EXPECT_EQ(under.guard_damage[0].rfind("q: ", 0), 0u) << under.guard_damage[0];
  EXPECT_NE(under.guard_damage[0].find("before"), std::string::npos) << under.guard_damage[0];
  // The last byte of O is O's own: no damage.
  const KernelInfo edge = stand_in([&](const AttnProblem& q, const DeviceTensors& t, void*) {
    write_outputs(q, t, 0.5);
    static_cast<std::uint8_t*>(t.o)[o_bytes - 1] = static_cast<std::uint8_t*>(t.o)[o_bytes - 1];
  });
  EXPECT_TRUE(run(edge).guard_damage.empty());
}

TEST_F(CaseArenaRun, ModifiedInputsAreNamed) {
  const KernelInfo writes_k = stand_in([](const AttnProblem& q, const DeviceTensors& t, void*) {
    write_outputs(q, t, 0.5);
    static_cast<std::uint16_t*>(const_cast<void*>(t.k))[5] ^= 1;
  });
  const RunResult r = run(writes_k);
  ASSERT_EQ(r.inputs_modified.size(), 1u) << r.describe();
  EXPECT_EQ(r.inputs_modified[0], "k: 1 element(s) changed, first at element 5");
  EXPECT_TRUE(run(correct()).clean());  // the next case uploads K again
}

TEST_F(CaseArenaRun, MaskInputsReachTheKernel) {
  p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625};
  p.seqlens_k = {7, 3};
  bool seen = false;
  const KernelInfo k = stand_in([&](const AttnProblem& q, const DeviceTensors& t, void*) {
    seen = t.alibi_slopes && t.seqlens_k && t.alibi_slopes[3] == 0.0625f && t.seqlens_k[0] == 7 && t.seqlens_k[1] == 3;
    write_outputs(q, t, 0.5);
  });
  EXPECT_TRUE(run(k).clean());
  EXPECT_TRUE(seen);
}

// A device fill stood in by the host generator writing through the pointers.
ArenaInputs host_fill(const AttnProblem& p, std::uint64_t seed, const InputDist& dist = {}) {
  return ArenaInputs::filled([p, seed, dist](void* q, void* k, void* v) {
    const AttnInputs in = counter_inputs(p, seed, dist);
    std::memcpy(q, in.q.bytes.data(), in.q.bytes.size());
    std::memcpy(k, in.k.bytes.data(), in.k.bytes.size());
    std::memcpy(v, in.v.bytes.data(), in.v.bytes.size());
  });
}

TEST_F(CaseArenaRun, FilledInputsComeBackAsWrittenAndAreSpotChecked) {
  InputDist dist;
  dist.key_ramp = 1.0 / 32;
  const ArenaRun r = run_in_arena(arena, correct(), dev, p, host_fill(p, 5, dist));
  EXPECT_TRUE(r.run.clean()) << r.run.describe();
  const AttnInputs want = counter_inputs(p, 5, dist);
  EXPECT_EQ(r.in.q.bytes, want.q.bytes);
  EXPECT_EQ(r.in.k.bytes, want.k.bytes);
  EXPECT_EQ(r.in.v.bytes, want.v.bytes);
  EXPECT_NO_THROW(spot_check_counter_inputs(p, 5, dist, r.in));
  // Another seed's bits, or a tensor the fill missed (still poison), fail the spot check.
  EXPECT_THROW(spot_check_counter_inputs(p, 6, dist, r.in), std::logic_error);
  const ArenaRun missed = run_in_arena(arena, correct(), dev, p, ArenaInputs::filled([&](void* q, void*, void* v) {
    std::memcpy(q, want.q.bytes.data(), want.q.bytes.size());
    std::memcpy(v, want.v.bytes.data(), want.v.bytes.size());
  }));
  try {
    spot_check_counter_inputs(p, 5, dist, missed.in);
    ADD_FAILURE() << "a K left as poison passed the spot check";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("at k["), std::string::npos) << e.what();
  }
  // The kernel modifying a filled input is found against the read-back copy.
  const KernelInfo writes_v = stand_in([](const AttnProblem& q, const DeviceTensors& t, void*) {
    write_outputs(q, t, 0.5);
    static_cast<std::uint16_t*>(const_cast<void*>(t.v))[0] ^= 1;
  });
  const ArenaRun mod = run_in_arena(arena, writes_v, dev, p, host_fill(p, 5, dist));
  ASSERT_EQ(mod.run.inputs_modified.size(), 1u);
  EXPECT_EQ(mod.run.inputs_modified[0], "v: 1 element(s) changed, first at element 0");
}

TEST_F(CaseArenaRun, AFillWritingOutsideItsTensorIsRefused) {
  const std::size_t k_bytes = static_cast<std::size_t>(p.k_span()) * dtype_size(p.dtype);
  try {
    run_in_arena(arena, correct(), dev, p, ArenaInputs::filled([&](void*, void* k, void*) { static_cast<std::uint8_t*>(k)[k_bytes] = 0; }));
    ADD_FAILURE() << "a fill past K's end was not refused";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("wrote outside k: "), std::string::npos) << e.what();
  }
  EXPECT_TRUE(run(correct()).clean());  // and the arena is whole again for the next case
}

TEST_F(CaseArenaRun, GrowsForALargerCaseAndKeepsChecking) {
  EXPECT_TRUE(run(correct()).clean());
  const std::size_t small = arena.capacity();
  p = test_problem(2, 8, 2, 64, 300, 128, DType::f32);
  in = counter_inputs(p, 3);
  const RunResult big = run(correct());
  EXPECT_TRUE(big.clean()) << big.describe();
  EXPECT_GT(arena.capacity(), small);
  EXPECT_EQ(arena.grown(), 2);
  p = test_problem(1, 1, 1, 1, 1, 16, DType::bf16);
  in = counter_inputs(p, 4);
  int launches = 0;
  const KernelInfo writes_once = stand_in([&](const AttnProblem& q, const DeviceTensors& t, void*) {
    if (launches++ == 0) write_outputs(q, t, 0.5);
  });
  EXPECT_TRUE(run(writes_once).clean());
  EXPECT_EQ(run(writes_once).o_unwritten, o_elements());
  EXPECT_EQ(arena.grown(), 2);
}

TEST_F(CaseArenaRun, RefusesWhatRunKernelRefuses) {
  KernelInfo refuses = correct();
  refuses.supports = [](const DeviceInfo&, const AttnProblem&) { return Support::no("d=16: not this one"); };
  EXPECT_THROW(run(refuses), UsageError);
  EXPECT_THROW(run_in_arena(arena, correct(), dev, p, ArenaInputs{}), UsageError);
  const AttnInputs small = counter_inputs(test_problem(1, 1, 1, 1, 1, 16, DType::f16), 1);
  EXPECT_THROW(run_in_arena(arena, correct(), dev, p, ArenaInputs::of(small)), UsageError);
  AttnProblem invalid = p;
  invalid.hkv = 3;  // hq = 4 is not a multiple
  EXPECT_THROW(run_in_arena(arena, correct(), dev, invalid, ArenaInputs::of(in)), UsageError);
}

TEST(DeviceMemory, GpuMemoryWithoutAGpuBackendSaysSo) {
#ifdef FP_HAVE_GPU_RUNTIME
  GTEST_SKIP() << "this build has a GPU backend";
#else
  EXPECT_THROW(gpu_memory(), NoDevice);
#endif
}

}  // namespace
}  // namespace flashprobe::kernels
