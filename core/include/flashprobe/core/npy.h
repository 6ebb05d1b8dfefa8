#pragma once
// NPY files (NumPy's .npy, format 1.0/2.0/3.0): little-endian f2, f4, f8, i4, u2 (bf16 is stored as
// u2 bit patterns, the way `tensor.view(torch.int16).numpy()` or `.view(np.uint16)` saves it), C order.
// Every malformed or truncated file raises UsageError naming the file and what is wrong: the header
// must be the dict numpy writes ('descr', 'fortran_order', 'shape': a tuple of non-negative integers)
// and the data exactly the size it declares.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace flashprobe {

enum class NpyType { f2, f4, f8, i4, u2 };

struct NpyArray {
  NpyType type = NpyType::f4;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;  // raw little-endian elements, C order

  std::int64_t numel() const;
  std::size_t elem_size() const;
  // Each element as a double; u2 is read as bf16 bits when `u2_is_bf16` (else as an integer).
  std::vector<double> to_doubles(bool u2_is_bf16 = true) const;
};

std::string npy_type_descr(NpyType t);  // "<f2", ...
NpyArray npy_parse(const std::vector<std::uint8_t>& bytes, const std::string& name);
std::vector<std::uint8_t> npy_serialize(const NpyArray& a);
// Reads the header, calls check_header (when given) with the array it declares (no data yet), then
// reads exactly the declared data: a regular file's length is compared first; a pipe or device is
// read no further than the declared size plus one byte. A directory or unreadable path is a UsageError.
NpyArray npy_load(const std::string& path, const std::function<void(const NpyArray&)>& check_header = {});
void npy_save(const std::string& path, const NpyArray& a);

}  // namespace flashprobe
