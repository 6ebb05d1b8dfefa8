#pragma once
// Probe records written by the GPU tests: one JSON file per atom, probe-<atom>.json, under
// $FLASHPROBE_RECORD_DIR (scripts/gpu/run-all sets it; nothing is written when it is unset).
// Format (flashprobe.probe/1, from record_header("probe")):
//   {"atom": "...", "family": "mma.sync|wmma|ldmatrix|wgmma", "source": "hardware",
//    "method": "...", "verdict": "matches ..." | "differs: ...", "seconds": ...,
//    "operands": [{"name": "A", "what": "...", "lanes", "slots", "rows", "cols",
//                  "at": [[row, col] per lane * slots + slot], "anomalies": [...]}]}
// test_replay.cpp reads these back from reports/data/ and compares them with the declared layouts.
#include <string>
#include <vector>

#include "product_check.h"

namespace flashprobe::nvidia::testing {

OperandMap formula_map(const std::string& operand, int lanes, int slots, int rows, int cols, const Map& f);
OperandMap named(OperandMap m, const std::string& operand);
void record_layouts(const std::string& atom, const std::string& family, const std::vector<OperandMap>& operands,
                    const std::string& verdict, const std::string& method = "");

}  // namespace flashprobe::nvidia::testing
