#pragma once
// GPU tests skip with the reason when no device is present, so one binary serves CPU CI and GPU runs.
#include <gtest/gtest.h>

#include "flashprobe/core/device_info.h"

#define FP_SKIP_WITHOUT_GPU()                                           \
  do {                                                                  \
    const auto fp_q_ = ::flashprobe::query_devices();                   \
    if (fp_q_.devices.empty()) GTEST_SKIP() << fp_q_.reason;            \
  } while (0)
