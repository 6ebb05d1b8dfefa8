#pragma once
// What a run says of an input the kernel wrote to: "<name>: N element(s) changed, first at element I",
// from the input's bytes after the run and before it (run_kernel's device buffers and the case
// arena's host image alike). Nothing when the bytes are equal.
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

namespace flashprobe::kernels {

inline std::optional<std::string> describe_modified(const char* name, std::span<const std::uint8_t> now,
                                                    std::span<const std::uint8_t> was, std::size_t element_bytes) {
  if (now.size() == was.size() && std::memcmp(now.data(), was.data(), now.size()) == 0) return std::nullopt;
  std::int64_t changed = 0, first = -1;
  for (std::size_t i = 0; i < was.size(); i += element_bytes)
    if (std::memcmp(now.data() + i, was.data() + i, element_bytes) != 0) {
      if (first < 0) first = static_cast<std::int64_t>(i / element_bytes);
      ++changed;
    }
  if (!changed) return std::nullopt;
  return std::string(name) + ": " + std::to_string(changed) + " element(s) changed, first at element " + std::to_string(first);
}

}  // namespace flashprobe::kernels
