#include "flashprobe/gate/host_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace flashprobe::gate {

bool keep_freed_host_memory() {
#if defined(__GLIBC__)
  static const bool ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptBytes)) == 1 &&
                         mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapBlockBytes)) == 1;
  return ok;
#else
  return false;
#endif
}

}  // namespace flashprobe::gate
