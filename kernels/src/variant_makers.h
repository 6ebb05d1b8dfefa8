#pragma once
// The registry entries that the named variants (variants.cpp) are made of: a production kernel's
// entry with its launch's measurement choices set. The production entries are the same functions
// with the default choices (make_mma_kernel, make_wgmma_kernel).
#include <string>

#include "flashprobe/kernels/registry.h"
#include "src/launchers.h"
#include "src/mma/mma_launchers.h"
#include "src/wgmma/wgmma_launchers.h"

namespace flashprobe::kernels {

KernelInfo make_mma(std::string name, std::string description, const detail::MmaOptions& o);
KernelInfo make_wgmma(std::string name, std::string description, const detail::WgmmaOptions& o);
// decode with its choices (src/launchers.h), named canonically: "decode/splits=3,fused=on,walk=2";
// no choice set is the production entry "decode".
KernelInfo make_decode_variant(const detail::DecodeOptions& o);

}  // namespace flashprobe::kernels
