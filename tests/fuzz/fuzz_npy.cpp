// libFuzzer target: the NPY reader (core/src/npy.cpp) on arbitrary bytes. Malformed input must raise
// UsageError; another exception, a crash, a sanitizer report or a broken property below is a finding.
#include <cstdint>
#include <vector>

#include "flashprobe/core/error.h"
#include "flashprobe/core/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flashprobe;
  const std::vector<std::uint8_t> bytes(data, data + size);
  NpyArray a;
  try {
    a = npy_parse(bytes, "fuzz.npy");
  } catch (const UsageError&) {
    return 0;
  }
  // What the reader accepts holds exactly its shape's data, and reads back the same once written.
  if (a.data.size() != static_cast<std::size_t>(a.numel()) * a.elem_size()) __builtin_trap();
  const NpyArray b = npy_parse(npy_serialize(a), "again.npy");
  if (b.type != a.type || b.shape != a.shape || b.data != a.data) __builtin_trap();
  if (a.to_doubles().size() != static_cast<std::size_t>(a.numel())) __builtin_trap();
  return 0;
}
