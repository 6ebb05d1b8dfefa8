#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <thread>
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

namespace {
// An NPY file (format 1.0) with the given header dictionary and `data_bytes` zero bytes after it.
std::vector<std::uint8_t> with_header(const std::string& dict, std::size_t data_bytes) {
  std::string hdr = dict;
  hdr.append((64 - (10 + hdr.size() + 1) % 64) % 64, ' ');
  hdr += '\n';
  std::string raw = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(hdr.size() & 0xFF) +
                    static_cast<char>(hdr.size() >> 8) + hdr;
  std::vector<std::uint8_t> b(raw.begin(), raw.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}
std::string header_with_shape(const std::string& shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}
std::string parse_error(const std::vector<std::uint8_t>& b) {
  try {
    npy_parse(b, "case.npy");
    return "";
  } catch (const UsageError& e) {
    return e.what();
  }
}
}  // namespace

// The header is a Python dict literal; a lenient parser read (1, 4x, 2, -8) as [1, 4, 2, 8] and a
// 30-digit dimension threw std::out_of_range (exit 1, no file named). Each malformed shape is refused,
// naming the file and the shape; an element count that overflows is refused before any allocation.
TEST(Npy, ShapesAndHeadersMustBeWellFormed) {
  const std::vector<std::pair<std::string, std::size_t>> bad_shapes{
      {"(1, 4x, 2, -8)", 64 * 4}, {"(1, -2)", 8}, {"(+3,)", 12}, {"(3 4)", 48}, {"(3,,)", 12}, {"(,)", 4},
      {"(, 3)", 12}, {"(999999999999999999999999999999,)", 4}, {"(4611686018427387904, 4)", 0},
      {"(4294967296, 4294967296, 4294967296)", 0},
      // Found by fuzz_npy (tests/fuzz/corpus/npy/regress_zero_after_overflow.npy): a zero dimension
      // after an overflowing product was read as an empty array, and numel() overflowed (UB).
      {"(5, 2, 1, 37, 21, 20, 68745, 3904, 48546, 7903, 0, 2, 4)", 0}, {"(4294967296, 4294967296, 0)", 0},
      {"[3]", 12}, {"(3", 12}, {"(0x3,)", 12}, {"(3.0,)", 12},
      {"(3)", 12}};
  for (const auto& [shape, bytes] : bad_shapes) {
    const std::string e = parse_error(with_header(header_with_shape(shape), bytes));
    EXPECT_NE(e.find("case.npy"), std::string::npos) << shape << ": " << e;
    EXPECT_NE(e.find("shape"), std::string::npos) << shape << ": " << e;
  }
  for (const std::string& dict : {
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}"),
           std::string("{'descr': '<f4', 'descr': '<f2', 'fortran_order': False, 'shape': (3,)}"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} garbage"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)"),
           std::string("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,)}"),
           std::string("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}"),
           std::string("{'shape': (3,), 'descr': '<f4'}"),
           std::string("x{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}"),
       }) {
    const std::string e = parse_error(with_header(dict, 12));
    EXPECT_NE(e.find("case.npy"), std::string::npos) << dict << ": " << e;
  }
  // What numpy writes (any key order, quotes, spacing, a trailing comma or none) still reads.
  for (const auto& [dict, shape] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", {2, 3}},
           {"{'shape': (6,), 'fortran_order': False, 'descr': '<f4'}", {6}},
           {"{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":( 1 , 6 , )}", {1, 6}},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3, 1)}", {1, 2, 3, 1}}}) {
    const auto a = npy_parse(with_header(dict, 24), "ok.npy");
    EXPECT_EQ(a.shape, shape) << dict;
  }
  EXPECT_EQ(npy_parse(with_header(header_with_shape("()"), 4), "ok.npy").numel(), 1);
  EXPECT_EQ(npy_parse(with_header(header_with_shape("(4294967296, 0, 3)"), 0), "ok.npy").numel(), 0);
}

// Files that are not regular: a directory is named as one; /dev/zero and a pipe that never ends are
// read only as far as the header declares (before, /dev/zero was read until std::bad_alloc).
TEST(Npy, NonRegularFilesAreReadWithABound) {
  try {
    npy_load(::testing::TempDir());
    FAIL() << "a directory was read";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
  try {
    npy_load("/dev/zero");
    FAIL() << "/dev/zero was read";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero"), std::string::npos) << e.what();
  }
  std::signal(SIGPIPE, SIG_IGN);
  const std::string fifo = tmp("endless.npy");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto good = with_header(header_with_shape("(4,)"), 16);
  std::thread writer([&] {  // the header, its 16 bytes, then zeros until the reader stops reading
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    std::vector<std::uint8_t> buf(good);
    buf.resize(1 << 16, 0);
    while (::write(fd, buf.data(), buf.size()) > 0) std::fill(buf.begin(), buf.end(), 0);
    ::close(fd);
  });
  try {
    npy_load(fifo);
    ADD_FAILURE() << "an endless pipe was read";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("trailing"), std::string::npos) << e.what();
  }
  writer.join();
  std::thread exact([&] {  // a pipe that holds exactly one array reads like the file
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    (void)!::write(fd, good.data(), good.size());
    ::close(fd);
  });
  EXPECT_EQ(npy_load(fifo).shape, (std::vector<std::int64_t>{4}));
  exact.join();
  std::remove(fifo.c_str());
}

// A regular file's declared size is compared with its length before the data is read.
TEST(Npy, DeclaredSizeMustMatchTheFile) {
  const std::string path = tmp("short.npy");
  const auto b = with_header(header_with_shape("(1099511627776,)"), 16);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  try {
    npy_load(path);
    FAIL() << "read";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("4398046511104"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("short.npy"), std::string::npos) << e.what();
  }
}
