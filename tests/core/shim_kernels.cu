// Device code for test_shim.cpp. Device sources never include GoogleTest: ROCm 5.2's clang crashes
// compiling gtest as C++20 HIP, and keeping kernels apart from assertions is cleaner anyway.
#include "flashprobe/core/device.cuh"
#include "shim_kernels.h"

namespace {
// out[i] = in[i] * 2 + (sum over the wave of lane ids, through a shuffle-xor tree with explicit width)
__global__ void round_trip(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int s = fp_dev::lane_id();
  for (int m = fp_dev::kWaveSize / 2; m >= 1; m /= 2) s += fp_dev::shfl_xor(s, m, fp_dev::kWaveSize);
  if (i < n) out[i] = in[i] * 2.0f + static_cast<float>(s);
}

__global__ void write_at(float* p, long long index, float v) { p[index] = v; }
}  // namespace

void launch_round_trip(const float* in, float* out, int n) { round_trip<<<(n + 127) / 128, 128>>>(in, out, n); }
void launch_write_at(float* p, long long index, float v, int threads) { write_at<<<1, threads>>>(p, index, v); }
