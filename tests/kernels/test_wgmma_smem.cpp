// The wgmma kernel's shared-memory addressing, replayed on the CPU for every element it reads: the
// TMA writes each chunk of a tile (64 dims in rows of 128 bytes, or 32 dims in rows of 64 bytes) as
// rows (tma_offset), and the wgmma reads through matrix descriptors whose canonical layouts the PTX
// ISA defines ("Shared Memory Matrix Layout", 128- and 64-byte swizzle; K-major and MN-major as in
// CUTLASS's make_gmma_desc). The swizzle is a
// function of the address applied identically on both sides, so agreement of the pre-swizzle
// offsets is what makes S = Q K^T and O += P V read the intended elements. A swapped LBO/SBO, a
// wrong chunk stride or a k-step offset off by one piece fails here instead of on a GPU.
#include <gtest/gtest.h>

#include <string>

#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::dev {
namespace {

// K-major, swizzle of sw bytes (128 or 64): element (m, k) of one k-step (k < 16) at
// start + (m/8) SBO + (m%8) sw + 2k.
constexpr int kmajor(int start, std::uint32_t sbo, int m, int k, int sw = 128) {
  return start + (m / 8) * static_cast<int>(sbo) + (m % 8) * sw + 2 * k;
}
// MN-major, swizzle of sw bytes: the pattern repeats every sw / 2 elements along N, LBO apart:
// element (k, n) at start + (n/(sw/2)) LBO + 2 (n%(sw/2)) + (k/8) SBO + (k%8) sw.
constexpr int mnmajor(int start, std::uint32_t lbo, std::uint32_t sbo, int k, int n, int sw = 128) {
  return start + (n / (sw / 2)) * static_cast<int>(lbo) + 2 * (n % (sw / 2)) + (k / 8) * static_cast<int>(sbo) + (k % 8) * sw;
}

template <int D, int Dv = class_dv(kWgmmaFineDimClasses, D), int S = 0>
std::string check_config() {
  using C = WgmmaConfig<D, Dv, S>;
  constexpr int sw = C::kRowBytes, atom = 8 * C::kRowBytes;  // the swizzle and its atom (8 rows)
  // S = Q K^T: A = Q rows of warpgroup wg, B = K rows (n = key) of stage st, k-step kk.
  for (int wg = 0; wg < C::kConsumers; ++wg)
    for (int kk = 0; kk < D / 16; ++kk) {
      const int start = C::q_rows(wg) + C::q_start(kk);
      if (start % atom >= sw) return "Q k-step start leaves the first row of its swizzle atom";
      for (int m = 0; m < 64; ++m)
        for (int k = 0; k < 16; ++k)
          if (kmajor(start, C::kSbo, m, k, sw) != C::tma_offset(C::kBm, wg * 64 + m, kk * 16 + k))
            return "Q wg " + std::to_string(wg) + " kk " + std::to_string(kk) + " m " + std::to_string(m) + " k " + std::to_string(k);
    }
  for (int st = 0; st < C::kStages; ++st) {
    for (int kk = 0; kk < D / 16; ++kk) {
      const int start = C::k_start(st, kk);
      if (start % atom >= sw) return "K k-step start leaves the first row of its swizzle atom";
      for (int n = 0; n < C::kBn; ++n)
        for (int k = 0; k < 16; ++k)
          if (kmajor(start, C::kSbo, n, k, sw) != st * C::kKTileBytes + C::tma_offset(C::kBn, n, kk * 16 + k))
            return "K st " + std::to_string(st) + " kk " + std::to_string(kk) + " n " + std::to_string(n) + " k " + std::to_string(k);
    }
    // O += P V: B[k = key][n = dim], k-step ks of 16 keys, N = kDv (two chunks at 128).
    for (int ks = 0; ks < C::kBn / 16; ++ks) {
      const int start = C::v_start(st, ks);
      if (start % atom != 0) return "V k-step start not on a swizzle atom";
      for (int k = 0; k < 16; ++k)
        for (int n = 0; n < C::kDv; ++n)
          if (mnmajor(start, C::kVLbo, C::kSbo, k, n, sw) != st * C::kVTileBytes + C::tma_offset(C::kBn, ks * 16 + k, n))
            return "V st " + std::to_string(st) + " ks " + std::to_string(ks) + " k " + std::to_string(k) + " n " + std::to_string(n);
    }
  }
  // Regions 1024-byte aligned (base offset 0 in every descriptor), inside the 14-bit address field.
  if (C::kKOff % 1024 || C::kVOff % 1024 || C::kKTileBytes % 1024 || C::kVTileBytes % 1024 || C::kQBytes % 1024)
    return "a region is not 1024-byte aligned";
  // The regions do not overlap and the barriers follow them.
  if (C::kVOff != C::kKOff + C::kStages * C::kKTileBytes || C::kBarOff != C::kVOff + C::kStages * C::kVTileBytes)
    return "regions overlap or leave gaps";
  if (C::kSmemBytes >= (1 << 18)) return "shared memory past the descriptor's 14-bit address field";
  return "";
}

TEST(WgmmaSmem, DescriptorsReadWhatTheTmaWrote) {
  EXPECT_EQ(check_config<64>(), "");
  EXPECT_EQ(check_config<128>(), "");
  EXPECT_EQ(check_config<192>(), "");  // Q/K 192 wide (three chunks), V 128, two stages
  EXPECT_EQ(WgmmaConfig<192>::kDv, 128);
  EXPECT_EQ(WgmmaConfig<192>::kStages, 2);
  // 192/192 (wgmma/classes=fine): three 64-dim chunks on both sides, 64 keys (S 32 + O 96 + P 16
  // registers), three stages of 48 KB beside Q's 48 KB.
  EXPECT_EQ((check_config<192, 192>()), "");
  EXPECT_EQ((WgmmaConfig<192, 192>::kDv), 192);
  EXPECT_EQ((WgmmaConfig<192, 192>::kChunk), 64);
  EXPECT_EQ((WgmmaConfig<192, 192>::kBn), 64);
  EXPECT_EQ((WgmmaConfig<192, 192>::kStages), 3);
  EXPECT_EQ((WgmmaConfig<192, 192>::kVChunks), 3);
  EXPECT_EQ(check_config<256>(), "");  // 256/256: 64 keys per tile, two stages of 64 KB beside Q's 64 KB
  EXPECT_EQ(check_config<160>(), "");  // 160/160: five 32-dim chunks, the 64-byte swizzle, 64 keys, 3 stages
  EXPECT_EQ(WgmmaConfig<160>::kChunk, 32);
  EXPECT_EQ(WgmmaConfig<160>::kBn, 64);
  EXPECT_EQ(WgmmaConfig<160>::kStages, 3);
  EXPECT_EQ(check_config<96>(), "");  // 96/96 (wgmma/classes=fine): three 32-dim chunks, 128 keys, 3 stages
  EXPECT_EQ(WgmmaConfig<96>::kChunk, 32);
  EXPECT_EQ(WgmmaConfig<96>::kBn, 128);
  EXPECT_EQ(WgmmaConfig<96>::kStages, 3);
  EXPECT_EQ(check_config<224>(), "");  // 224/224 (wgmma/classes=fine): seven 32-dim chunks, 64 keys, 3 stages
  EXPECT_EQ(WgmmaConfig<224>::kChunk, 32);
  EXPECT_EQ(WgmmaConfig<224>::kBn, 64);
  EXPECT_EQ(WgmmaConfig<224>::kStages, 3);
  EXPECT_EQ(WgmmaConfig<192>::kChunk, 64);  // every class of whole 64-dim chunks keeps the 128-byte swizzle
  EXPECT_EQ(WgmmaConfig<256>::kChunk, 64);
  EXPECT_EQ(WgmmaConfig<256>::kDv, 256);
  EXPECT_EQ(WgmmaConfig<256>::kBn, 64);
  EXPECT_EQ(WgmmaConfig<256>::kStages, 2);
  // The stage count is the most that fits (at most 3): the 64/64 and 128/128 classes keep their 3.
  EXPECT_EQ(WgmmaConfig<64>::kStages, 3);
  EXPECT_EQ(WgmmaConfig<128>::kStages, 3);
  EXPECT_EQ(WgmmaConfig<128>::kBn, 128);
  // wgmma/stages=4|5 at 64/64: exactly that many stages, every one read where the TMA wrote it, and
  // the barriers past the last stage (static_asserts: inside the 227 KB).
  EXPECT_EQ((check_config<64, 64, 4>()), "");
  EXPECT_EQ((check_config<64, 64, 5>()), "");
  EXPECT_EQ((WgmmaConfig<64, 64, 4>::kStages), 4);
  EXPECT_EQ((WgmmaConfig<64, 64, 5>::kStages), 5);
  EXPECT_EQ((WgmmaConfig<64, 64, 5>::kBarOff), 16384 + 5 * 2 * 16384);
  EXPECT_LE((WgmmaConfig<64, 64, 5>::kSmemBytes), 232448);
  EXPECT_EQ((WgmmaConfig<64, 64, 3>::kSmemBytes), WgmmaConfig<64>::kSmemBytes);  // 0 is the class's own 3
}

// Every class of the list has a configuration that fits an sm_90 block (static_asserts in WgmmaConfig)
// and whose one more stage would not: kStages is what the shared memory allows, not a guess.
template <int D, int Dv = class_dv(kWgmmaFineDimClasses, D)>
int one_more_stage_bytes() {
  using C = WgmmaConfig<D, Dv>;
  return C::kSmemBytes + C::kBn * (D + C::kDv) * 2 + 4 * 8;
}
TEST(WgmmaSmem, StagesFillTheSharedMemory) {
  EXPECT_GT(one_more_stage_bytes<128>(), 232448);
  EXPECT_GT(one_more_stage_bytes<192>(), 232448);
  EXPECT_GT(one_more_stage_bytes<256>(), 232448);
  EXPECT_GT(one_more_stage_bytes<224>(), 232448);
  EXPECT_GT((one_more_stage_bytes<192, 192>()), 232448);
}

// The replay is sharp: the layouts a plausible slip would produce do not match.
TEST(WgmmaSmem, ASwappedStrideOrAShiftedStepIsCaught) {
  using C = WgmmaConfig<128>;
  // V read with LBO and SBO exchanged.
  EXPECT_NE(mnmajor(C::v_start(0, 1), C::kSbo, C::kVLbo, 9, 10), C::tma_offset(C::kBn, 16 + 9, 10));
  EXPECT_EQ(mnmajor(C::v_start(0, 1), C::kVLbo, C::kSbo, 9, 70), C::tma_offset(C::kBn, 16 + 9, 70));
  // A k-step of 16 dims is 32 bytes: 16 bytes would read dims 8..23.
  EXPECT_NE(kmajor(C::q_start(1) - 16, C::kSbo, 3, 0), C::tma_offset(C::kBm, 3, 16));
  // K of dims 64..127 sits one chunk (kBn rows) further, not kBm rows.
  EXPECT_EQ(C::k_start(0, 4), C::kBn * 128);
}

TEST(WgmmaSmem, DescriptorWordsPackTheFields) {
  const DescWords w = desc_words_swizzled(0x1A2B0, 16384, 1024, 128);
  EXPECT_EQ(w.lo & 0x3FFF, 0x1A2Bu);             // start address >> 4
  EXPECT_EQ((w.lo >> 16) & 0x3FFF, 16384u >> 4);  // LBO
  EXPECT_EQ(w.hi & 0x3FFF, 1024u >> 4);           // SBO (bits 32-45)
  EXPECT_EQ(w.hi >> 30, 1u);                      // layout type 1: 128-byte swizzle (bits 62-63)
  EXPECT_EQ((w.hi >> 14) & 0xFFFF, 0u);           // base offset and reserved bits zero
  EXPECT_EQ(desc_words_swizzled(0x1A2B0, 16384, 512, 64).hi >> 30, 2u);  // layout type 2: 64-byte swizzle
}

// The 64-byte swizzle's replay is as sharp: a 128-byte row stride or a 64-dim repeat would misread.
TEST(WgmmaSmem, The64ByteLayoutIsNotThe128ByteOne) {
  using C = WgmmaConfig<160>;
  EXPECT_EQ(C::kSbo, 512u);
  EXPECT_EQ(mnmajor(C::v_start(0, 1), C::kVLbo, C::kSbo, 9, 40, 64), C::tma_offset(C::kBn, 16 + 9, 40));
  EXPECT_NE(mnmajor(C::v_start(0, 1), C::kVLbo, C::kSbo, 9, 40, 128), C::tma_offset(C::kBn, 16 + 9, 40));
  EXPECT_NE(kmajor(C::q_start(3), C::kSbo, 5, 2, 128), C::tma_offset(C::kBm, 5, 48 + 2));
  EXPECT_EQ(kmajor(C::q_start(3), C::kSbo, 5, 2, 64), C::tma_offset(C::kBm, 5, 48 + 2));
}

}  // namespace
}  // namespace flashprobe::kernels::dev
