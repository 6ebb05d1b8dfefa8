#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/core/npy.h"

using namespace flashprobe;

namespace {
NpyArray make(NpyType t, std::vector<std::int64_t> shape) {
  NpyArray a;
  a.type = t;
  a.shape = std::move(shape);
  a.data.resize(static_cast<std::size_t>(a.numel()) * a.elem_size());
  for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<std::uint8_t>(i * 37 + 11);
  return a;
}
std::string tmp(const char* name) { return ::testing::TempDir() + name; }
}  // namespace

TEST(Npy, RoundTripsEveryTypeAndRank) {
  for (NpyType t : {NpyType::f2, NpyType::f4, NpyType::f8, NpyType::i4, NpyType::u2})
    for (auto shape : std::vector<std::vector<std::int64_t>>{{}, {7}, {2, 3}, {1, 5, 3, 4}, {0, 3}}) {
      const auto a = make(t, shape);
      const auto b = npy_parse(npy_serialize(a), "mem");
      EXPECT_EQ(b.type, a.type);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.data, a.data);
    }
  const auto a = make(NpyType::f4, {3, 4});
  npy_save(tmp("rt.npy"), a);
  EXPECT_EQ(npy_load(tmp("rt.npy")).data, a.data);
}

TEST(Npy, HeaderIsPaddedTo64BytesAsNumpyWrites) {
  const auto bytes = npy_serialize(make(NpyType::f2, {2, 3}));
  const std::size_t hlen = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(bytes[10 + hlen - 1], '\n');
}

TEST(Npy, ReadsAFileWrittenByNumpy) {
  // numpy.save of np.array([[1.5, -2.0]], dtype=np.float16), byte for byte.
  std::string hdr = "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2), }";
  hdr.append(128 - 10 - hdr.size() - 1, ' ');
  hdr += '\n';
  std::string raw = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(hdr.size()) + '\0' + hdr;
  std::vector<std::uint8_t> b(raw.begin(), raw.end());
  for (std::uint16_t h : {to_f16_bits(1.5), to_f16_bits(-2.0)}) {
    b.push_back(static_cast<std::uint8_t>(h & 0xFF));
    b.push_back(static_cast<std::uint8_t>(h >> 8));
  }
  const auto a = npy_parse(b, "np.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(a.to_doubles(), (std::vector<double>{1.5, -2.0}));
}

TEST(Npy, MalformedFilesGiveErrorsNamingTheFileAndTheProblem) {
  auto good = npy_serialize(make(NpyType::f4, {4, 4}));
  auto expect_error = [](const std::vector<std::uint8_t>& b, const std::string& needle) {
    try {
      npy_parse(b, "case.npy");
      FAIL() << "no error, expected: " << needle;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("case.npy"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({}, "magic");
  expect_error({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0}, "magic");
  auto truncated = good;
  truncated.resize(truncated.size() - 5);
  expect_error(truncated, "truncated");
  auto header_cut = good;
  header_cut.resize(40);
  expect_error(header_cut, "header is truncated");
  auto trailing = good;
  trailing.push_back(0);
  expect_error(trailing, "trailing");
  auto bad_type = good;
  const std::string s(bad_type.begin(), bad_type.end());
  const auto pos = s.find("<f4");
  bad_type[pos + 1] = 'c';
  expect_error(bad_type, "not supported");
  auto fortran = good;
  const auto fpos = std::string(fortran.begin(), fortran.end()).find("False");
  std::memcpy(fortran.data() + fpos, "True ", 5);
  expect_error(fortran, "Fortran");
  EXPECT_THROW(npy_load(tmp("does-not-exist.npy")), UsageError);
}
