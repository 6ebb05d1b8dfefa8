// A kernel whose only job is to show whether private (scratch) memory is private to each wave: every
// lane of 4 waves writes its own values into a private array indexed at run time (so it lives in
// scratch), all waves meet at a barrier, then every lane reads one value back. On AMD hardware each
// wave has its own scratch: out[t] == 1000 * wave + lane for every thread t. The emulator harness runs
// it (emulator/amdemu/defects.py) to tell an emulator whose waves share scratch from a kernel bug.
#include "flashprobe/core/device.cuh"

extern "C" __global__ void __launch_bounds__(128) scratch_is_per_wave(int* out, int n, int pick) {
  int priv[64];
  const int t = static_cast<int>(threadIdx.x), wave = fp_dev::wave_id(), lane = fp_dev::lane_id();
  for (int i = 0; i < n; ++i) priv[i] = 1000 * wave + lane + 100000 * i;
  fp_dev::barrier();
  out[t] = priv[pick] - 100000 * pick;
}
