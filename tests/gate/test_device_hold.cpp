// The device memory a property holds for its run (gate/device_hold.h), on the CPU with a stand-in
// device memory: the cross-process lock (flock) and its bounded wait, the retry while memory is short,
// the shortage naming the buffer, the bytes and free / total, and nothing leaked on any path.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/gate/device_hold.h"

using namespace flashprobe;
using namespace flashprobe::gate;

namespace {

// A device of `capacity` bytes that refuses the first `refusals` allocations (as the GPU runtime's
// memory does when full: DeviceMemoryShortage with free / total); counts what is live.
struct StandInMemory final : DeviceMemory {
  std::size_t capacity = 0, used = 0;
  int refusals = 0, live = 0, attempts = 0;
  void* allocate(std::size_t n) override {
    ++attempts;
    if (refusals > 0 || used + n > capacity) {
      --refusals;
      throw DeviceMemoryShortage("a device allocation of " + std::to_string(n) + " bytes", n, capacity - used, capacity);
    }
    used += n;
    ++live;
    return new std::size_t(n);
  }
  void release(void* p) noexcept override {
    auto* n = static_cast<std::size_t*>(p);
    used -= *n;
    --live;
    delete n;
  }
  void* allocate_host(std::size_t) override { return nullptr; }
  void release_host(void*) noexcept override {}
  void fill(void*, std::uint8_t, std::size_t) override {}
  void to_device(void*, const void*, std::size_t) override {}
  void to_host(void*, const void*, std::size_t) override {}
  void synchronize() override {}
  bool on_gpu() const override { return false; }
};

std::string lock_file(const std::string& name) { return ::testing::TempDir() + "fp_hold_" + name + ".lock"; }

HoldRequest request(const std::string& lock, double wait_s) {
  HoldRequest r;
  r.buffers = {{"Q", 100}, {"K", 200}, {"V", 300}};
  r.lock_path = lock;
  r.wait_s = wait_s;
  r.retry_s = 0.01;
  return r;
}

}  // namespace

TEST(FileLock, IsExclusiveAndTheWaitIsBounded) {
  const std::string path = lock_file("exclusive");
  auto first = FileLock::acquire(path, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(FileLock::acquire(path, 0.1), nullptr);  // another open file: as another process
  first.reset();
  EXPECT_NE(FileLock::acquire(path, 0), nullptr);
}

// Across processes, as the gates sharing a GPU use it: a holder in another process makes us wait,
// and its death (killed mid-run) frees the lock (flock is released with the process's files).
TEST(FileLock, AnotherProcessHoldsItUntilItDies) {
  const std::string path = lock_file("process");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = FileLock::acquire(path, 5);
    const char c = held ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::sleep(30);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(FileLock::acquire(path, 0.2), nullptr);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NE(FileLock::acquire(path, 1), nullptr);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(FileLock, AFolderThatIsNotThereIsAUsageErrorNamingIt) {
  try {
    FileLock::acquire("/nonexistent-folder/x.lock", 0);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/x.lock"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("FLASHPROBE_GATE_LOCK_DIR"), std::string::npos) << e.what();
  }
}

TEST(DeviceHold, HoldsItsBuffersUnderTheLockAndGivesBothBack) {
  auto dev = std::make_shared<StandInMemory>();
  dev->capacity = 1000;
  const std::string path = lock_file("hold");
  {
    auto h = hold_device_buffers(dev, request(path, 1));
    ASSERT_EQ(h->buffers.size(), 3u);
    EXPECT_EQ(dev->used, 600u);
    EXPECT_EQ(FileLock::acquire(path, 0), nullptr);  // held while the buffers are
  }
  EXPECT_EQ(dev->live, 0);
  EXPECT_NE(FileLock::acquire(path, 0), nullptr);
}

TEST(DeviceHold, RetriesWhileMemoryIsShortThenHolds) {
  auto dev = std::make_shared<StandInMemory>();
  dev->capacity = 1000;
  dev->refusals = 2;
  auto h = hold_device_buffers(dev, request(lock_file("retry"), 5));
  EXPECT_EQ(h->buffers.size(), 3u);
  EXPECT_EQ(dev->attempts, 2 + 3);
  EXPECT_GT(h->waited_s, 0.0);
}

TEST(DeviceHold, AShortageNamesTheBufferTheBytesAndFreeOfTotalAndLeaksNothing) {
  auto dev = std::make_shared<StandInMemory>();
  dev->capacity = 250;  // Q fits, K does not
  const std::string path = lock_file("short");
  try {
    hold_device_buffers(dev, request(path, 0.05));
    FAIL() << "no shortage";
  } catch (const DeviceMemoryShortage& e) {
    EXPECT_EQ(e.allocation, "K");
    EXPECT_EQ(e.wanted, 200u);
    EXPECT_EQ(e.free, 150u);
    EXPECT_EQ(e.total, 250u);
    EXPECT_NE(std::string(e.what()).find("device memory: K: 200 bytes wanted"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("600 bytes in all"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dev->live, 0);
  EXPECT_NE(FileLock::acquire(path, 0), nullptr);  // the lock went with the failed hold
}

TEST(DeviceHold, ALockHeldTooLongIsAShortageNamingTheLock) {
  auto dev = std::make_shared<StandInMemory>();
  dev->capacity = 1000;
  const std::string path = lock_file("busy");
  auto other = FileLock::acquire(path, 0);
  ASSERT_NE(other, nullptr);
  try {
    hold_device_buffers(dev, request(path, 0.1));
    FAIL() << "no shortage";
  } catch (const DeviceMemoryShortage& e) {
    EXPECT_NE(std::string(e.what()).find("the lock " + path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("another process held it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dev->attempts, 0);
}

TEST(DeviceHold, TheLockFolderAndTheWaitComeFromTheEnvironment) {
  setenv("FLASHPROBE_GATE_LOCK_DIR", "/some/dir", 1);
  EXPECT_EQ(device_lock_path(3), "/some/dir/flashprobe-gate-device3.lock");
  unsetenv("FLASHPROBE_GATE_LOCK_DIR");
  unsetenv("FLASHPROBE_GATE_LOCK_WAIT_S");
  EXPECT_EQ(device_wait_seconds(), 120);
  setenv("FLASHPROBE_GATE_LOCK_WAIT_S", "2.5", 1);
  EXPECT_EQ(device_wait_seconds(), 2.5);
  setenv("FLASHPROBE_GATE_LOCK_WAIT_S", "soon", 1);
  try {
    device_wait_seconds();
    FAIL() << "no usage error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("FLASHPROBE_GATE_LOCK_WAIT_S=soon"), std::string::npos) << e.what();
  }
  unsetenv("FLASHPROBE_GATE_LOCK_WAIT_S");
}
