#include "flashprobe/gate/device_hold.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "flashprobe/core/error.h"

namespace flashprobe::gate {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void pause(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", s);
  return b;
}

}  // namespace

std::unique_ptr<FileLock> FileLock::acquire(const std::string& path, double wait_s, double poll_s) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    throw UsageError("lock file " + path + ": " + std::strerror(errno) +
                     " (FLASHPROBE_GATE_LOCK_DIR names its folder; it must exist and be writable)");
  const auto t0 = Clock::now();
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // Who holds it, for a reader of the file while it waits (informational).
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
      return std::unique_ptr<FileLock>(new FileLock(fd));
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw UsageError("lock file " + path + ": flock: " + why);
    }
    if (since(t0) >= wait_s) {
      ::close(fd);
      return nullptr;
    }
    pause(poll_s);
  }
}

FileLock::~FileLock() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

std::string device_lock_path(int device_index) {
  std::string dir = "/tmp";
  if (const char* d = std::getenv("FLASHPROBE_GATE_LOCK_DIR"); d && *d) dir = d;
  else if (const char* t = std::getenv("TMPDIR"); t && *t) dir = t;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/flashprobe-gate-device" + std::to_string(device_index) + ".lock";
}

double device_wait_seconds() {
  const char* v = std::getenv("FLASHPROBE_GATE_LOCK_WAIT_S");
  if (!v || !*v) return 120;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end || !std::isfinite(s) || s < 0)
    throw UsageError(std::string("FLASHPROBE_GATE_LOCK_WAIT_S=") + v + ": a number of seconds >= 0 (default 120)");
  return s;
}

DeviceHold::~DeviceHold() {
  for (void* p : buffers)
    if (p) memory_->release(p);
  buffers.clear();
  lock_.reset();  // after the memory is back
}

std::unique_ptr<DeviceHold> hold_device_buffers(std::shared_ptr<DeviceMemory> m, const HoldRequest& r) {
  const auto t0 = Clock::now();
  std::unique_ptr<DeviceHold> h(new DeviceHold());
  h->memory_ = std::move(m);
  DeviceMemory* const mem = h->memory_.get();
  std::size_t all = 0;
  for (const auto& b : r.buffers) all += b.second;
  if (!r.lock_path.empty()) {
    h->lock_ = FileLock::acquire(r.lock_path, r.wait_s);
    if (!h->lock_)
      throw DeviceMemoryShortage("the lock " + r.lock_path + " for " + std::to_string(r.buffers.size()) + " buffers", all, 0, 0,
                                 "another process held it for " + seconds_text(since(t0)) +
                                     " (FLASHPROBE_GATE_LOCK_WAIT_S=" + seconds_text(r.wait_s) + ")");
  }
  for (int attempt = 1;; ++attempt) {
    std::size_t i = 0;
    unsigned long long f = 0, t = 0;  // the runtime's free / total when one did not fit
    for (; i < r.buffers.size(); ++i) {
      try {
        h->buffers.push_back(mem->allocate(r.buffers[i].second));
      } catch (const DeviceMemoryShortage& e) {
        f = e.free, t = e.total;
        break;
      }
    }
    if (i == r.buffers.size()) {
      h->waited_s = since(t0);
      return h;
    }
    // Everything back, so that another process (or the next attempt) can have it.
    for (void* p : h->buffers) mem->release(p);
    h->buffers.clear();
    if (since(t0) + r.retry_s > r.wait_s)
      throw DeviceMemoryShortage(r.buffers[i].first, r.buffers[i].second, f, t,
                                 std::to_string(attempt) + " attempt(s) in " + seconds_text(since(t0)) + ", " +
                                     std::to_string(all) + " bytes in all" +
                                     (r.lock_path.empty() ? std::string() : ", under the lock " + r.lock_path));
    pause(r.retry_s);
  }
}

}  // namespace flashprobe::gate
