// The atom registry: sound descriptors, sources, lookups, the hardware-executor hook.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "flashprobe/probes/executor.h"
#include "flashprobe/probes/simulated.h"

using namespace flashprobe::probes;

TEST(Registry, EveryDescriptorIsSoundAndDocumentedLayoutsNameTheirSource) {
  std::set<std::string> names;
  for (const AtomDesc& a : mma_atoms()) {
    EXPECT_TRUE(validate(a).empty()) << a.name << ": " << (validate(a).empty() ? "" : validate(a).front());
    EXPECT_TRUE(names.insert(a.name).second) << a.name;
    if (a.expected) {
      EXPECT_TRUE(a.source.documented()) << a.name;
    }
  }
  for (const LoadAtomDesc& a : load_atoms()) {
    EXPECT_TRUE(validate(a).empty()) << a.name;
    EXPECT_TRUE(names.insert(a.name).second) << a.name;
  }
  EXPECT_EQ(atom_names().size(), names.size());
}

TEST(Registry, TheIssuesAtomsArePresent) {
  for (const char* n : {"SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN", "SM80_16x8x8_F32F16F16F32_TN",
                        "SM80_16x8x32_S32S8S8S32_TN", "SM90_64x8x16_F32F16F16_RS", "SM90_64x256x16_F32F16F16_RS",
                        "GFX11_WMMA_16x16x16_F32F16_W32", "GFX11_WMMA_16x16x16_F32BF16_W64",
                        "GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI", "GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_LO",
                        "GFX12_WMMA_16x16x16_F32F16_W32", "GFX12_WMMA_16x16x16_F32BF16_W64", "CDNA_MFMA_32x32x8_F32F16",
                        "CDNA_MFMA_16x16x16_F32F16", "CDNA_MFMA_32x32x8_F32BF16_1K", "CDNA_MFMA_16x16x16_F32BF16_1K",
                        "CDNA_MFMA_16x16x32_F32E4M3", "SM80_WMMA_16x16x16_F32F16F16F32_TN"})
    EXPECT_NE(find_mma_atom(n), nullptr) << n;
  EXPECT_NE(find_load_atom("SM75_LDMATRIX_X4_B16_TRANS"), nullptr);
  EXPECT_EQ(find_mma_atom("NOPE"), nullptr);
  const AtomDesc& w = *find_mma_atom("SM80_WMMA_32x8x16_F32BF16BF16F32_NT");
  EXPECT_FALSE(w.expected.has_value());
  EXPECT_EQ(w.source.text(), "none documented");
  EXPECT_EQ(w.a_slots, 16);
  EXPECT_EQ(w.b_slots, 4);
}

TEST(Registry, HardwareExecutorsPlugInByName) {
#if defined(FLASHPROBE_BACKEND_OFF)
  for (const AtomDesc& a : mma_atoms()) EXPECT_FALSE(has_hardware_executor(a.name)) << a.name;
#endif
  const AtomDesc& atom = *find_mma_atom("CDNA_MFMA_16x16x16_F32F16");
  AtomDesc fake = atom;
  fake.name = "TEST_ONLY_FAKE_ATOM";
  std::string why;
  EXPECT_EQ(make_hardware_executor(fake, why), nullptr);
  EXPECT_NE(why.find("no hardware executor"), std::string::npos) << why;
  register_executor(fake.name, [](const AtomDesc& a, std::string&) -> std::unique_ptr<Executor> {
    return std::make_unique<SimulatedExecutor>(a, *a.expected);
  });
  EXPECT_TRUE(has_hardware_executor(fake.name));
  why.clear();
  auto ex = make_hardware_executor(fake, why);
  ASSERT_NE(ex, nullptr) << why;
  register_executor("TEST_ONLY_DECLINES", [](const AtomDesc&, std::string& w) -> std::unique_ptr<Executor> {
    w = "device is sm_80, wgmma needs sm_90a";
    return nullptr;
  });
  fake.name = "TEST_ONLY_DECLINES";
  EXPECT_EQ(make_hardware_executor(fake, why), nullptr);
  EXPECT_EQ(why, "device is sm_80, wgmma needs sm_90a");
}

TEST(ElemTypes, ExactValuesAreExactAndDistinct) {
  const auto v = exact_values({ElemType::e4m3}, 40);
  std::set<double> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 40u);
  for (double x : v) EXPECT_EQ(round_to_elem(ElemType::e4m3, x), x) << x;
  EXPECT_EQ(s.count(17), 0u);
  EXPECT_EQ(round_to_elem(ElemType::e4m3, 17), 16);  // tie to even
  EXPECT_EQ(round_to_elem(ElemType::e4m3, 448), 448);
  EXPECT_EQ(round_to_elem(ElemType::s8, 200), 127);
  EXPECT_EQ(round_to_elem(ElemType::bf16, 257), 256);
  EXPECT_THROW(exact_values({ElemType::s8}, 300), std::invalid_argument);
}

// OCP e5m2 keeps two mantissa bits: 9, 11, 13 and 15 are not values (the small-integer shortcut of
// the other types must not apply), overflow goes to infinity.
TEST(ElemTypes, E5m2RoundsAtTwoMantissaBits) {
  const auto v = exact_values({ElemType::e5m2}, 24);
  const std::vector<double> want{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8, 10, -10, 12, -12, 14, -14, 16, -16};
  EXPECT_EQ(v, want);
  EXPECT_EQ(round_to_elem(ElemType::e5m2, 9), 8);    // tie to even mantissa (8 = 1.00 x 2^3)
  EXPECT_EQ(round_to_elem(ElemType::e5m2, 11), 12);  // tie: 12 = 1.10 x 2^3 is even
  EXPECT_EQ(round_to_elem(ElemType::e5m2, -13), -12);
  EXPECT_EQ(round_to_elem(ElemType::e5m2, 57344), 57344);
  EXPECT_EQ(round_to_elem(ElemType::e5m2, 61439), 57344);
  EXPECT_TRUE(std::isinf(round_to_elem(ElemType::e5m2, 61440)));
  EXPECT_EQ(round_to_elem(ElemType::e5m2, std::ldexp(1.0, -16)), std::ldexp(1.0, -16));  // smallest subnormal
  EXPECT_EQ(round_to_elem(ElemType::e5m2, std::ldexp(3.0, -18)), std::ldexp(1.0, -16));  // 0.75 ulp up
  EXPECT_EQ(exact_value_above({ElemType::e5m2, ElemType::f32}, 16), 20);
  EXPECT_EQ(parse_elem("e5m2"), ElemType::e5m2);
}

TEST(ElemTypes, ExactValueAbove) {
  EXPECT_EQ(exact_value_above({ElemType::f16, ElemType::f32}, 16), 17);
  EXPECT_EQ(exact_value_above({ElemType::e4m3, ElemType::f32}, 32), 36);  // 33..35 are not e4m3
  EXPECT_EQ(exact_value_above({ElemType::s8, ElemType::s32}, 126.5), 127);
  EXPECT_EQ(exact_value_above({ElemType::s8}, 127), std::nullopt);
}
