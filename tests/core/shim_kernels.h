#pragma once
// Launchers for the shim test kernels (no error checking here: the tests check, through the shim).
void launch_round_trip(const float* in, float* out, int n);
void launch_write_at(float* p, long long index, float v, int threads = 1);
