// Compiled by clang-19 for every AMD target (cmake/AmdDeviceCode.cmake): the shim's intrinsics must
// compile for gfx11/gfx12/CDNA, and a width-16 shuffle-xor must become a cross-lane instruction.
#include "flashprobe/core/device.cuh"

__global__ void shim_smoke(float* out) {
  float v = out[threadIdx.x];
  for (int m = 8; m >= 1; m /= 2) v += fp_dev::shfl_xor(v, m, 16);
  fp_dev::barrier();
  if (v < -1e30f) fp_dev::trap();
  out[threadIdx.x] = v + static_cast<float>(fp_dev::lane_id());
}
