// The cuDNN plug-in's diagnostic entry point, exported by libfp_cudnn_sdpa.so beside the plug-in ABI
// (cudnn_sdpa_diagnose.cpp says what it prints). scripts/gpu/cudnn_diagnose.py calls it through ctypes
// with the signature below (its SIGNATURES table; tests/scripts/test_cudnn_diagnose.py compares the
// two): no arguments, an int back.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// How many of the fixed problems got no plan (0 expected), -1 when cuDNN did not load.
__attribute__((visibility("default"))) int fp_cudnn_sdpa_diagnose(void);

#ifdef __cplusplus
}
#endif
