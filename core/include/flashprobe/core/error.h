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

// The harness could not allocate device memory it needs (not the kernel's doing): names the
// allocation, the bytes wanted and the runtime's free / total bytes at that moment (0 / 0 when the
// runtime could not say). The gate reports the property as not exercised for it, never as failed by
// the kernel and never as passed.
struct DeviceMemoryShortage : std::runtime_error {
  DeviceMemoryShortage(const std::string& what_for, unsigned long long wanted_bytes, unsigned long long free_bytes,
                       unsigned long long total_bytes, const std::string& note = "")
      : std::runtime_error("device memory: " + what_for + ": " + std::to_string(wanted_bytes) + " bytes wanted, the runtime has " +
                           (total_bytes ? std::to_string(free_bytes >> 20) + " MiB free of " + std::to_string(total_bytes >> 20) + " MiB"
                                        : std::string("no free/total to tell")) +
                           (note.empty() ? "" : " (" + note + ")")),
        allocation(what_for), wanted(wanted_bytes), free(free_bytes), total(total_bytes) {}
  std::string allocation;
  unsigned long long wanted, free, total;
};

// Thrown when a GPU is needed but this build or machine has none; tests turn it into a skip.
struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace flashprobe
