// The AMD experiment kernels (atoms.h) and the engine's registry (atom.h, expected_*.cpp) describe
// the same instructions: same names, shapes, slot counts and element types, and every target the
// registry lists is one the kernels accept. A mismatch would make the hardware executor feed the
// engine the wrong fragment shape.
#include <gtest/gtest.h>

#include <string>

#include "flashprobe/probes/amd/atoms.h"
#include "flashprobe/probes/atom.h"

namespace amd = flashprobe::probes::amd;
namespace fp = flashprobe::probes;

namespace {
// The engine's e4m3/e5m2 are the OCP formats; gfx94x's MFMA reads FNUZ fp8/bf8 (see elements.h),
// gfx12's WMMA OCP.
amd::AmdElem as_amd(fp::ElemType t, amd::AmdFamily family) {
  switch (t) {
    case fp::ElemType::f16: return amd::AmdElem::f16;
    case fp::ElemType::bf16: return amd::AmdElem::bf16;
    case fp::ElemType::f32: return amd::AmdElem::f32;
    case fp::ElemType::e4m3: return family == amd::AmdFamily::cdna ? amd::AmdElem::fp8_e4m3fnuz : amd::AmdElem::fp8_e4m3;
    case fp::ElemType::e5m2: return family == amd::AmdFamily::cdna ? amd::AmdElem::bf8_e5m2fnuz : amd::AmdElem::bf8_e5m2;
    default: return static_cast<amd::AmdElem>(-1);
  }
}
}  // namespace

TEST(AmdRegistry, EveryRegistryAtomHasAKernelWithTheSameShape) {
  int n = 0;
  for (const fp::AtomDesc& a : fp::mma_atoms()) {
    if (a.vendor != fp::Vendor::amd) continue;
    ++n;
    SCOPED_TRACE(a.name);
    const amd::AmdAtomShape* s = amd::find_amd_atom(a.name);
    ASSERT_NE(s, nullptr) << "no AMD experiment kernel for a registry atom";
    EXPECT_EQ(s->wave, a.wave);
    EXPECT_EQ(s->m, a.m);
    EXPECT_EQ(s->n, a.n);
    EXPECT_EQ(s->k, a.k);
    EXPECT_EQ(s->a_slots, a.a_slots);
    EXPECT_EQ(s->b_slots, a.b_slots);
    EXPECT_EQ(s->c_slots, a.c_slots);
    EXPECT_EQ(s->a_in, as_amd(a.a_type, s->family));
    EXPECT_EQ(s->b_in, as_amd(a.b_type, s->family));
    EXPECT_EQ(s->acc, as_amd(a.c_type, s->family));
    const bool hi = a.name.find("_OPSEL_HI") != std::string::npos, lo = a.name.find("_OPSEL_LO") != std::string::npos;
    EXPECT_EQ(s->opsel, hi ? 1 : lo ? 0 : -1);
    for (const auto& t : a.targets) EXPECT_TRUE(amd::amd_atom_runs_on(*s, t)) << "registry target " << t;
  }
  EXPECT_EQ(n, static_cast<int>(amd::kAmdAtoms.size())) << "every AMD kernel is a registry atom and vice versa";
}

TEST(AmdRegistry, EveryKernelIsARegistryAtom) {
  for (const auto& s : amd::kAmdAtoms) {
    const fp::AtomDesc* a = fp::find_mma_atom(s.name);
    ASSERT_NE(a, nullptr) << s.name;
    EXPECT_EQ(a->vendor, fp::Vendor::amd) << s.name;
    EXPECT_TRUE(a->expected.has_value()) << s.name << " has no expected layout to simulate";
  }
}
