#pragma once
// Errors with a user-facing meaning. Exit codes: 0 success, 1 a check failed,
// 2 bad usage or input. UsageError carries the value that was wrong and what is allowed.
#include <stdexcept>
#include <string>

namespace flashprobe {

// Bad input or usage: the CLI prints the message and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A GPU runtime call failed: names the call, the code, the file and line.
struct GpuError : std::runtime_error {
  GpuError(const std::string& call, int error_code, const std::string& code_name, const char* file, int line)
      : std::runtime_error(call + " failed with " + code_name + " (" + std::to_string(error_code) + ") at " +
                           file + ":" + std::to_string(line)),
        code(error_code) {}
  int code;
};

// Thrown when a GPU is needed but this build or machine has none; tests turn it into a skip.
struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace flashprobe
