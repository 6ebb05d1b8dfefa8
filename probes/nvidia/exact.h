#pragma once
// Host-side guard of the executors' contract: every experiment value must be stored exactly by the
// instruction's element type, so a probe never measures a rounded input.
#include <span>
#include <string>

namespace flashprobe::nvidia {

enum class ExactKind { f16, bf16, s8, s32, f32 };
// Throws UsageError naming `what`, the index and the value of the first value `kind` cannot hold.
void require_exact(ExactKind kind, std::span<const float> v, const std::string& what);
// Throws UsageError unless v.size() == expected.
void require_size(std::span<const float> v, std::size_t expected, const std::string& what);

}  // namespace flashprobe::nvidia
