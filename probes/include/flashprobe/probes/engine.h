#pragma once
// The probe engine: derive an instruction's register layout from nothing but D = mma(A, B, C).
//
// Experiment plan (every phase is one batched executor call, split only when the executor or the
// memory budget limits the batch; ProbeResult::executor_calls counts the calls):
//
//  P1  singles   one-hot A slot x all-ones B        -> lit D slots = that slot's row (class)
//                all-ones A x one-hot B slot        -> lit D slots = its column
//                A = B = 0, C encoded (distinct)    -> D = C: pass-through, C and D agree
//                A = B = 1, C = 0                   -> D = K on every used D slot
//      A slot with no effect is *ignored*. A slot whose effect is clean (values 0/1) and lights a
//      whole row (N used D slots) is *complete*. Anything else -- a partial row, or values that are
//      not one of the possible sums (NaN, garbage) -- is *incomplete*: the hardware needs the other
//      copies of a replica group set as well (RDNA3 wave32 WMMA: lanes 16..31 must equal lanes 0..15
//      for A and B; with one copy set they disagree and the result is wrong or undefined).
//      Packed: the singles travel in packs (src/packing.h) of up to 16 slots of one operand, member
//      j holding 2^j (fewer where 2^j or the sums below 2^width would not be exact: 11 for an f16
//      accumulator, 9 for e4m3, 7 for s8), so bit j of each D value is what member j alone lit. Slots
//      a power of two apart (one-bit replicas) share no pack when there are several. The decoder
//      trusts a pack only when every used D value is an integer in [0, 2^width) and every member
//      lights nothing or one whole row (column); any other pack -- a lone replica copy, a short row,
//      NaN -- is re-run as plain singles in one more call (ProbeResult::packs_rerun), classified as
//      above. If each of those singles lights nothing or one whole row (column), the pack's values
//      did not add up, which exact arithmetic rules out: an anomaly.
//  R   partners  for one representative incomplete slot s per operand: s together with s^m for
//                every XOR mask m over lane bits or slot bits (R1), then with the span of every two
//                lane masks (R2, only if no single mask works). A clean, full result names the
//                replica group's shape; every incomplete slot's group is its orbit under that span.
//                Assumption (true of every documented replication): a group is a coset of an XOR
//                subspace -- two copies differing by a lane or a slot mask, or four copies differing
//                by lane masks. Slots it cannot explain stay unresolved and are reported, never
//                guessed. When several hypotheses give clean results (possible when a lone copy
//                feeds a clean part of the result), the one whose predicted rows and columns form a
//                grid is taken, preferring the expected layout's replicas, then fewest mask bits;
//                the random-input verification (P4) checks the choice.
//  P2  groups    the P1 row/column experiments again with every copy of a group set (only when
//                groups of several copies were found)
//  P3  k match   A groups x B encoded: within each column every B group gets a distinct exact
//                value, so D[row][col] names the B group that shares the A group's k. A group only
//                reaches its own row (P1), so experiment e sets the e-th A group of every row at once:
//                K experiments, each D row answering for its own group (a row with no e-th group must
//                stay 0). Ignored slots carry a noise value above twice the largest B value, so an A
//                or B slot wrongly called ignored pushes some D value out of its column's values (or
//                off 0) and shows up as an anomaly.
//
// Replicas the hardware merely *duplicates* (a copy it never reads, e.g. what nvcuda::wmma keeps
// for another instruction) are invisible to D = mma(A, B, C): they are derived as ignored. Only a
// load path (load_path.h) can show them as duplicates (the wmma probes report both views).
//
//  P4  verify    a few experiments with random small integers everywhere (replicas equal, noise in
//                ignored slots): D must equal what the derived layout predicts, exactly.
//
// Consistency checks: row/column classes partition the used D slots into M rows and N columns; C/D
// injective and complete; each (m, k) of A and (k, n) of B held by exactly one group; k classes
// consistent (one A group per row and one B group per column in every class; K classes).
//
// Labels: semantics fixes indices only up to a relabelling of rows, columns and k. If the atom has
// an expected layout and a relabelling makes the derived layout agree with it on most slots, its
// labels are used and the verdict is `matches` or `differs` (with the diff). Otherwise labels are
// canonical -- rows and k numbered by first appearance scanning A lane-major, columns scanning B --
// and the result says so. A derived layout that equals the expected one up to a consistent
// relabelling of all operands is indistinguishable from it by semantics alone; load paths give
// absolute labels.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/executor.h"
#include "flashprobe/probes/layout.h"

namespace flashprobe::probes {

struct ProbeOptions {
  // Upper bound on one executor call's buffers (A, B, C and D as doubles); batches are split above it.
  std::size_t max_call_bytes = std::size_t{256} << 20;
  bool use_expected_labels = true;
};

enum class Verdict { matches, differs, not_isomorphic, no_expected };
std::string_view verdict_name(Verdict v);

struct Check {
  std::string name;
  bool ok = true;
  std::string detail;
};

struct ProbeResult {
  std::string atom;
  std::string source;       // executor's source(): "simulated" or "hardware"
  std::string executor;     // executor's description()
  MmaLayout derived;
  bool labels_from_expected = false;  // else canonical first-appearance labels
  // What anchored the labels when it was not the expected layout's document: a load path of this
  // device (hardware_probe.cpp sets "memory path: <method>"); empty otherwise.
  std::string label_anchor;
  Verdict verdict = Verdict::no_expected;
  std::vector<SlotDiff> diff;         // expected vs derived, when labels_from_expected
  std::vector<Check> checks;
  std::vector<std::string> anomalies; // D values that were not one of the expected sums, unresolved slots
  std::vector<std::string> notes;     // choices the engine made that semantics alone could not force
  std::vector<int> c_to_d;            // pass-through: C slot i came out in D slot c_to_d[i] (-1: nowhere)
  int executor_calls = 0;
  long experiments = 0;               // every experiment run, packs and their re-run singles included
  int packs_rerun = 0;                // P1 packs the decoder distrusted, re-run as singles
  double seconds = 0;

  bool checks_ok() const;
  // The probe found a sound layout and it agrees with the expected one (or there is none).
  bool ok() const;
};

ProbeResult probe(const AtomDesc& atom, Executor& executor, const ProbeOptions& options = {});

// Per operand, which coordinates the experiments observed and where the others come from. D = A*B
// observes the rows of A and C/D (one labelling shared by both), the columns of B and C/D, which A
// slot meets which B slot on k, replicas and ignored slots. It cannot observe the absolute k order:
// any permutation of k applied to A and B alike gives the same D, so k labels are the document's
// (or canonical, or a load path's where one anchors them). {"A": {"observed": [...], "k": {"from",
// "why"}}, "B": ..., "C": {"observed": [...]}}
nlohmann::json observability(const ProbeResult& r);
// "documented", "canonical" or "load path": where the k labels of A and B come from.
std::string k_labels_from(const ProbeResult& r);

// Human-readable report: verdict, formulas, checks, anomalies, diff, and (with grids) the grids.
std::string report(const ProbeResult& r, bool with_grids);
// {"atom", "source", "executor", "verdict", "labels", "observability", "layout", "formulas", "checks",
//  "anomalies", "diff", "executor_calls", "experiments", "packs_rerun", "seconds"}
void to_json(nlohmann::json& j, const ProbeResult& r);

}  // namespace flashprobe::probes
