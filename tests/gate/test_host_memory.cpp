// keep_freed_host_memory(): blocks freed between cases are taken again without new page faults.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "flashprobe/gate/host_memory.h"

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// One "case": four 12 MiB blocks (the size of a large check's vectors), every page written, then freed.
void one_case() {
  std::vector<char*> blocks;
  for (int i = 0; i < 4; ++i) {
    auto* p = static_cast<char*>(std::malloc(std::size_t{12} << 20));
    ASSERT_NE(p, nullptr);
    std::memset(p, i + 1, std::size_t{12} << 20);
    blocks.push_back(p);
  }
  for (char* p : blocks) std::free(p);
}

}  // namespace

#if defined(__GLIBC__)
TEST(HostMemory, FreedBlocksAreTakenAgainWithoutPageFaults) {
  ASSERT_TRUE(flashprobe::gate::keep_freed_host_memory());
  one_case();  // the first case maps its pages
  const long before = minor_faults();
  for (int i = 0; i < 3; ++i) one_case();
  // 3 cases of 48 MiB are 36,864 pages; with glibc's defaults most of them fault again.
  EXPECT_LT(minor_faults() - before, 1000) << "the freed blocks went back to the system between cases";
}
#endif
