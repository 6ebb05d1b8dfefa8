#pragma once
// Host stand-ins for the gate's CPU tests: subjects whose runner computes attention on the CPU (the
// oracle's double reference, rounded to the output dtype, written through the problem's strides into
// poisoned outputs, so EveryOutputWritten's poison count is the runner's own), behind the same
// Subject interface as a kernel or a plug-in. Each name is one behaviour:
//   correct          right on every problem
//   scales-2-key-rows O scaled by 1.25 where a batch element has 2 keys or more (a planted bug that
//                    shrinks to 2 keys)
//   refuses-all      supports() refuses every problem ("d=...: refuses everything")
//   refuses-batches  supports() refuses batch > 1 (BatchInvariant, which needs two, is not exercised)
//   launch-fails     its launch returns an error (as a plug-in's failed execute)
//   arena-correct    correct, run on a case arena over host memory (kernels/case_arena.h): its kernel
//                    reads the inputs and writes the outputs through the pointers, the inputs filled
//                    in place by the host generator
//   arena-writes-once the same, but its kernel writes O and LSE on its first launch only (a planted
//                    stale-output bug that a runner keeping buffers across cases must not hide)
//   short-of-memory  correct, on a stand-in H100 (stand_in_device.h) whose device memory has 1 GiB
//                    free: LargeOffsetsAgree's tensors cannot be held (device_hold.h)
//   runner-short-of-memory  its runner's device buffer does not fit (DeviceMemoryShortage) every time
#include <string>

#include "flashprobe/gate/command.h"
#include "flashprobe/gate/subject.h"

namespace flashprobe::gate::testing {

// @throws UsageError naming an unknown stand-in and the names above.
Subject host_subject(const std::string& name, const std::string& dtype);
// Resolves {"host", name}; refuses kernels and plug-ins (a CPU test has no device).
Resolver host_resolver();

}  // namespace flashprobe::gate::testing
