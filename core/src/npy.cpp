#include "flashprobe/core/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"

namespace flashprobe {

namespace {
constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMaxHeader = std::size_t{1} << 20;  // numpy writes < 64 KiB; 1 MiB bounds a bad length

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

// The header dictionary, as numpy writes it: a Python dict literal with exactly the keys 'descr' (a
// string), 'fortran_order' (True or False) and 'shape' (a tuple of non-negative decimal integers, a
// 1-tuple with its trailing comma), in any order, then spaces and a newline. Nothing else is accepted.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  NpyArray parse() {
    ws();
    expect('{', "the header must be a dict starting with '{'");
    bool descr = false, order = false, shape = false;
    NpyArray a;
    for (ws(); !eat('}'); ws()) {
      const std::string key = quoted("a quoted key");
      ws();
      expect(':', "expected ':' after '" + key + "'");
      ws();
      if (key == "descr") {
        once(descr, key);
        a.type = dtype(quoted("'descr' must be a quoted string such as '<f4'"));
      } else if (key == "fortran_order") {
        once(order, key);
        if (word("True")) bad(name_, "Fortran order is not supported; save a C-contiguous array (numpy.ascontiguousarray)");
        if (!word("False")) fail("'fortran_order' must be True or False, got " + near());
      } else if (key == "shape") {
        once(shape, key);
        a.shape = tuple();
      } else {
        fail("unexpected key '" + key + "' (an NPY header holds exactly 'descr', 'fortran_order' and 'shape')");
      }
      ws();
      if (!eat(',') && (i_ >= s_.size() || s_[i_] != '}')) fail("expected ',' or '}' at " + near());
    }
    ws();
    if (i_ != s_.size()) fail("unexpected text after the header dict: " + near());
    if (!descr) bad(name_, "header has no 'descr'");
    if (!order) bad(name_, "header has no 'fortran_order'");
    if (!shape) bad(name_, "header has no 'shape'");
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad(name_, "header: " + what); }
  std::string near() const {
    if (i_ >= s_.size()) return "the end of the header";
    std::string t = s_.substr(i_, 24);
    for (char& c : t)
      if (c < 32 || c > 126) c = '?';
    return "'" + t + "'";
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c, const std::string& what) {
    if (!eat(c)) fail(what + ", got " + near());
  }
  bool word(const char* w) {
    const std::size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  void once(bool& seen, const std::string& key) {
    if (seen) fail("key '" + key + "' appears twice");
    seen = true;
  }
  std::string quoted(const std::string& what) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail("expected " + what + " at " + near());
    const char q = s_[i_++];
    const std::size_t end = s_.find(q, i_);
    if (end == std::string::npos) fail("unterminated string at " + near());
    std::string v = s_.substr(i_, end - i_);
    if (v.find('\\') != std::string::npos || v.find('\n') != std::string::npos) fail("unexpected escape in string at " + near());
    i_ = end + 1;
    return v;
  }
  NpyType dtype(const std::string& descr) {
    if (descr == "<f2") return NpyType::f2;
    if (descr == "<f4") return NpyType::f4;
    if (descr == "<f8") return NpyType::f8;
    if (descr == "<i4") return NpyType::i4;
    if (descr == "<u2" || descr == "<i2") return NpyType::u2;
    bad(name_, "dtype '" + descr + "' is not supported (allowed: <f2, <f4, <f8, <i4, <u2/<i2 as bf16 bits)");
  }
  [[noreturn]] void bad_shape(std::size_t start) {
    const std::size_t close = s_.find(')', start);
    const std::string text = s_.substr(start, close == std::string::npos ? 40 : std::min<std::size_t>(close - start + 1, 80));
    fail("'shape' must be a tuple of non-negative integers such as (2, 3) or (4,), got " + text);
  }
  std::vector<std::int64_t> tuple() {
    const std::size_t start = i_;
    std::vector<std::int64_t> dims;
    if (!eat('(')) bad_shape(start);
    ws();
    bool trailing_comma = false;
    while (!eat(')')) {
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') bad_shape(start);
      if (s_[i_] == '0' && i_ + 1 < s_.size() && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9') bad_shape(start);
      std::int64_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[i_++] - '0', &v))
          fail("a 'shape' dimension does not fit in 64 bits: " + s_.substr(start, 80));
      dims.push_back(v);
      ws();
      trailing_comma = eat(',');
      ws();
      if (!trailing_comma && (i_ >= s_.size() || s_[i_] != ')')) bad_shape(start);
    }
    if (dims.size() == 1 && !trailing_comma) bad_shape(start);  // (3) is the number 3, not a tuple
    return dims;
  }

  const std::string& s_;
  const std::string& name_;
  std::size_t i_ = 0;
};

// The array a header describes (no data) and the bytes before and of its data.
struct Header {
  NpyArray a;
  std::size_t data_offset = 0, data_bytes = 0;
};

// The prefix length of the header: 0 when `n` bytes are too few to tell yet.
std::size_t header_end(const std::uint8_t* b, std::size_t n, const std::string& name) {
  if (n < 10 || std::memcmp(b, kMagic, 6) != 0) bad(name, "missing the \\x93NUMPY magic");
  const int major = b[6];
  if (major < 1 || major > 3) bad(name, "unsupported format version " + std::to_string(major));
  if (major == 1) return 10 + (b[8] | (b[9] << 8));
  if (n < 12) bad(name, "truncated header length");
  const std::size_t hlen = b[8] | (b[9] << 8) | (b[10] << 16) | (static_cast<std::size_t>(b[11]) << 24);
  if (hlen > kMaxHeader) bad(name, "header length " + std::to_string(hlen) + " is more than 1 MiB");
  return 12 + hlen;
}

Header parse_header(const std::uint8_t* b, std::size_t n, const std::string& name) {
  Header h;
  h.data_offset = header_end(b, n, name);
  if (n < h.data_offset) bad(name, "header is truncated (" + std::to_string(n) + " bytes in file)");
  const std::size_t start = b[6] == 1 ? 10 : 12;
  const std::string text(reinterpret_cast<const char*>(b) + start, h.data_offset - start);
  h.a = HeaderParser(text, name).parse();
  // The product of the non-zero dimensions must fit, also when a zero makes the array empty: then
  // every running product (numel(), in any order of the zero) fits as well.
  std::int64_t nonzero = 1, bytes = 0;
  bool empty = false;
  for (auto d : h.a.shape)
    if (d == 0) empty = true;
    else if (__builtin_mul_overflow(nonzero, d, &nonzero)) bad(name, "'shape' declares more elements than fit in 64 bits");
  if (__builtin_mul_overflow(empty ? 0 : nonzero, static_cast<std::int64_t>(type_size(h.a.type)), &bytes))
    bad(name, "'shape' declares more data than fits in 64 bits");
  h.data_bytes = static_cast<std::size_t>(bytes);
  return h;
}

[[noreturn]] void size_mismatch(const std::string& name, std::size_t have, std::size_t need) {
  if (have < need)
    bad(name, "data is truncated: " + std::to_string(have) + " bytes present, " + std::to_string(need) + " needed");
  bad(name, "has " + std::to_string(have - need) + " trailing bytes after the data");
}

// Reads up to n bytes; fewer only at the end of the file.
std::size_t read_some(int fd, std::uint8_t* out, std::size_t n, const std::string& path) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw UsageError(path + ": cannot read NPY file: " + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};
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
  Header h = parse_header(b.data(), b.size(), name);
  const std::size_t have = b.size() - h.data_offset;
  if (have != h.data_bytes) size_mismatch(name, have, h.data_bytes);
  h.a.data.assign(b.begin() + static_cast<std::ptrdiff_t>(h.data_offset), b.end());
  return std::move(h.a);
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

NpyArray npy_load(const std::string& path, const std::function<void(const NpyArray&)>& check_header) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) throw UsageError(path + ": cannot open NPY file: " + std::strerror(errno));
  const Fd fd{raw};
  struct stat st{};
  if (::fstat(fd.fd, &st) != 0) throw UsageError(path + ": cannot open NPY file: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw UsageError(path + ": is a directory, not an NPY file");
  // The header first (bounded), then exactly the data it declares: a regular file's length is
  // compared before anything is allocated; a pipe or device is read as far as the declared size, and
  // a byte beyond it is an error (so /dev/zero or an endless pipe ends at once).
  std::vector<std::uint8_t> head(12);
  head.resize(read_some(fd.fd, head.data(), head.size(), path));
  const std::size_t end = header_end(head.data(), head.size(), path);
  const std::size_t have_head = head.size();
  if (end > have_head) {
    head.resize(end);
    head.resize(have_head + read_some(fd.fd, head.data() + have_head, end - have_head, path));
  }
  Header h = parse_header(head.data(), head.size(), path);
  if (check_header) check_header(h.a);
  std::vector<std::uint8_t>& data = h.a.data;
  if (head.size() > h.data_offset) data.assign(head.begin() + static_cast<std::ptrdiff_t>(h.data_offset), head.end());
  if (S_ISREG(st.st_mode)) {
    const auto file = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t have = file >= h.data_offset ? file - h.data_offset : 0;
    if (have != h.data_bytes) size_mismatch(path, static_cast<std::size_t>(have), h.data_bytes);
  }
  constexpr std::size_t kChunk = std::size_t{1} << 24;
  if (data.size() > h.data_bytes) size_mismatch(path, data.size(), h.data_bytes);
  while (data.size() < h.data_bytes) {  // grows only as the data arrives
    const std::size_t at = data.size(), want = std::min(kChunk, h.data_bytes - at);
    data.resize(at + want);
    const std::size_t got = read_some(fd.fd, data.data() + at, want, path);
    if (got < want) size_mismatch(path, at + got, h.data_bytes);
  }
  std::uint8_t extra;
  if (read_some(fd.fd, &extra, 1, path) != 0)
    bad(path, "has trailing bytes after the " + std::to_string(h.data_bytes) + " bytes of data the header declares");
  return std::move(h.a);
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
