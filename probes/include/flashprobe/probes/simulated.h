#pragma once
// Simulated atoms: a CPU D = C + A*B driven by any layout table, so the whole engine runs in CI.
//
//   SimulatedExecutor sim(*find_mma_atom("GFX11_WMMA_16x16x16_F32F16_W32"), layout);
//   ProbeResult r = probe(atom, sim);          // r.source == "simulated"
//
// What the simulated hardware reads:
//  - an ignored A/B slot is never read; an ignored C/D slot keeps its C value in D;
//  - values are rounded to the operand types on the way in and D to the accumulator type on the way
//    out, so an experiment that is not exact shows up as a wrong sum, as it would on silicon;
//  - replicas (several slots holding one element) are all read, and must agree:
//      ReplicaRule::partial  copy j of an A element is read for the outputs of columns n with
//                            n % copies == j (B: rows m % copies == j). Disagreeing copies give a
//                            wrong result in part of the outputs. A model of RDNA3 wave32 WMMA's
//                            requirement that lanes 16..31 replicate lanes 0..15, not a claim about
//                            which copy the silicon reads for which output.
//      ReplicaRule::poison   any disagreement makes every D slot NaN ("undefined").
// @pre layout shapes equal the atom's (M, N, K, wave, slots); C/D injective (one holder per element).
#include <string>
#include <vector>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/executor.h"
#include "flashprobe/probes/layout.h"

namespace flashprobe::probes {

enum class ReplicaRule { partial, poison };
std::string_view replica_rule_name(ReplicaRule r);

class SimulatedExecutor : public Executor {
 public:
  SimulatedExecutor(const AtomDesc& atom, MmaLayout layout, ReplicaRule rule = ReplicaRule::partial);
  std::string source() const override { return "simulated"; }
  std::string description() const override;
  void run(const FragmentBatch& batch, std::vector<double>& d) override;

 private:
  struct Holders {
    std::vector<int> offset;  // per element: start in `slots` (size elements + 1)
    std::vector<int> slots;   // flat (lane, slot) indices, grouped by element
  };
  static Holders index(const OperandLayout& l);
  AtomDesc atom_;
  MmaLayout layout_;
  ReplicaRule rule_;
  Holders a_, b_;
  std::vector<int> c_holder_;  // element -> flat C slot or -1
};

}  // namespace flashprobe::probes
