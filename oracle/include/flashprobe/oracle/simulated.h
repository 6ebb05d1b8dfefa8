#pragma once
// CPU stand-ins for GPU attention kernels, used to calibrate and test the tolerance model
// (TOLERANCE.md, bench/calibrate_tolerance.cpp, tests/oracle/test_check.cpp).
//
// The correct ones compute attention the ways real fp16/bf16 kernels legitimately differ: three-pass
// softmax or online softmax over key tiles of various widths, exp vs exp2 with the scale folded into
// log2(e), sequential fp32 dot products vs tensor-core-like chunks (exact 16-term sums added to an fp32
// accumulator with truncation), division vs multiplication by 1/l, split-KV merged through the LSE.
// Every one rounds P to the input type before P·V and O to the output type. The buggy ones each plant
// one real bug on top of a correct kernel (mask off by one, scale twice, bf16 truncation, ...).
//
// Example:
//   for (const auto& k : simulated_kernels())
//     std::cout << k.name << " " << check(p, in, run_simulated(k, p, in)).pass << "\n";
#include <string>
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::oracle {

struct SimConfig {
  int block_k = 0;          // keys per tile of the online softmax; 0 = the whole row at once (three-pass)
  bool exp2 = false;        // scores multiplied by scale*log2(e) in fp32, exp2 instead of exp
  int dot_chunk = 0;        // 0: sequential fp32 sums; n: exact n-term chunks added to fp32 with truncation
  bool reciprocal = false;  // O = acc * (1/l) instead of acc / l
  int splits = 1;           // split-KV: partial results merged through their LSE in fp32
  // Planted bugs (all false in a correct kernel).
  int mask_shift = 0;             // causal: the last visible key moves by this many positions
  bool top_left = false;          // causal aligned top-left instead of bottom-right
  bool scale_twice = false;       // scores multiplied by the scale twice
  bool scale_twice_lse = false;   // LSE = scale * m + log(l) with m already scaled
  bool truncate = false;          // P and O rounded toward zero instead of to nearest
  bool drop_last_key = false;     // the last visible key of each row is skipped (tail-tile off by one)
  bool wrong_gqa = false;         // query head h reads kv head h % hkv instead of h / (hq / hkv)
  bool pad_pow2 = false;          // the row reduction pads to a power of two with score 0 instead of -inf
  bool out_via_f16 = false;       // an f32 O rounded to f16 on its way out (no effect on 16-bit outputs)
  bool ulp_up = false;            // O rounded to nearest, then one ulp up (toward +inf)
};

struct SimulatedKernel {
  std::string name;
  bool correct = true;
  std::string what;  // one line
  SimConfig cfg;
};

const std::vector<SimulatedKernel>& simulated_kernels();
const SimulatedKernel& simulated_kernel(const std::string& name);  // throws UsageError for unknown names
// O in p.out_dtype at p.o_strides(), LSE [B, Hq, Sq] f32.
AttnOutputs run_simulated(const SimulatedKernel& k, const AttnProblem& p, const AttnInputs& in);

}  // namespace flashprobe::oracle
