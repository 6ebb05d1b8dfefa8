#include "flashprobe/core/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"

namespace flashprobe {

namespace {
constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw UsageError(name + ": not a valid NPY file: " + what);
}

std::size_t type_size(NpyType t) {
  switch (t) {
    case NpyType::f2: case NpyType::u2: return 2;
    case NpyType::f4: case NpyType::i4: return 4;
    case NpyType::f8: return 8;
  }
  return 0;
}
}  // namespace

std::string npy_type_descr(NpyType t) {
  switch (t) {
    case NpyType::f2: return "<f2";
    case NpyType::f4: return "<f4";
    case NpyType::f8: return "<f8";
    case NpyType::i4: return "<i4";
    case NpyType::u2: return "<u2";
  }
  return "?";
}

std::int64_t NpyArray::numel() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}
std::size_t NpyArray::elem_size() const { return type_size(type); }

std::vector<double> NpyArray::to_doubles(bool u2_is_bf16) const {
  const auto n = static_cast<std::size_t>(numel());
  std::vector<double> out(n);
  const std::uint8_t* p = data.data();
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case NpyType::f2: { std::uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = from_f16_bits(v); break; }
      case NpyType::u2: { std::uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = u2_is_bf16 ? from_bf16_bits(v) : v; break; }
      case NpyType::f4: { float v; std::memcpy(&v, p + 4 * i, 4); out[i] = v; break; }
      case NpyType::i4: { std::int32_t v; std::memcpy(&v, p + 4 * i, 4); out[i] = v; break; }
      case NpyType::f8: { double v; std::memcpy(&v, p + 8 * i, 8); out[i] = v; break; }
    }
  }
  return out;
}

NpyArray npy_parse(const std::vector<std::uint8_t>& b, const std::string& name) {
  if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0) bad(name, "missing the \\x93NUMPY magic");
  const int major = b[6];
  if (major < 1 || major > 3) bad(name, "unsupported format version " + std::to_string(major));
  std::size_t hlen, hstart;
  if (major == 1) {
    hlen = b[8] | (b[9] << 8);
    hstart = 10;
  } else {
    if (b.size() < 12) bad(name, "truncated header length");
    hlen = b[8] | (b[9] << 8) | (b[10] << 16) | (static_cast<std::size_t>(b[11]) << 24);
    hstart = 12;
  }
  if (b.size() < hstart + hlen) bad(name, "header is truncated (" + std::to_string(b.size()) + " bytes in file)");
  const std::string header(b.begin() + static_cast<std::ptrdiff_t>(hstart),
                           b.begin() + static_cast<std::ptrdiff_t>(hstart + hlen));
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')"))) bad(name, "header has no 'descr'");
  const std::string descr = m[1];
  NpyArray a;
  if (descr == "<f2") a.type = NpyType::f2;
  else if (descr == "<f4") a.type = NpyType::f4;
  else if (descr == "<f8") a.type = NpyType::f8;
  else if (descr == "<i4") a.type = NpyType::i4;
  else if (descr == "<u2" || descr == "<i2") a.type = NpyType::u2;
  else bad(name, "dtype '" + descr + "' is not supported (allowed: <f2, <f4, <f8, <i4, <u2/<i2 as bf16 bits)");
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))")))
    bad(name, "header has no 'fortran_order'");
  if (m[1] == "True") bad(name, "Fortran order is not supported; save a C-contiguous array (numpy.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) bad(name, "header has no 'shape'");
  const std::string dims = m[1];
  const std::regex num(R"(\s*(\d+)\s*,?)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it)
    a.shape.push_back(std::stoll((*it)[1]));
  const auto need = static_cast<std::size_t>(a.numel()) * type_size(a.type);
  const std::size_t have = b.size() - hstart - hlen;
  if (have < need)
    bad(name, "data is truncated: " + std::to_string(have) + " bytes present, " + std::to_string(need) + " needed");
  if (have > need)
    bad(name, "has " + std::to_string(have - need) + " trailing bytes after the data");
  a.data.assign(b.begin() + static_cast<std::ptrdiff_t>(hstart + hlen), b.end());
  return a;
}

std::vector<std::uint8_t> npy_serialize(const NpyArray& a) {
  std::string shape = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 || i + 1 < a.shape.size() ? "," : "");
  shape += ")";
  std::string header = "{'descr': '" + npy_type_descr(a.type) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<std::uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<std::uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

NpyArray npy_load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError(path + ": cannot open NPY file");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return npy_parse(bytes, path);
}

void npy_save(const std::string& path, const NpyArray& a) {
  if (static_cast<std::size_t>(a.numel()) * a.elem_size() != a.data.size())
    throw UsageError(path + ": array data size does not match its shape");
  std::ofstream f(path, std::ios::binary);
  if (!f) throw UsageError(path + ": cannot write NPY file");
  const auto bytes = npy_serialize(a);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw UsageError(path + ": write failed");
}

}  // namespace flashprobe
