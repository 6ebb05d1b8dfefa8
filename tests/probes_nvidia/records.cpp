#include "records.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "flashprobe/core/record.h"

namespace flashprobe::nvidia::testing {

OperandMap formula_map(const std::string& operand, int lanes, int slots, int rows, int cols, const Map& f) {
  OperandMap m;
  m.what = operand;
  m.lanes = lanes;
  m.slots = slots;
  m.rows = rows;
  m.cols = cols;
  for (int l = 0; l < lanes; ++l)
    for (int s = 0; s < slots; ++s) {
      const auto rc = f(l, s);
      m.at.push_back({rc.row, rc.col});
    }
  return m;
}

OperandMap named(OperandMap m, const std::string& operand) {
  m.what = operand + ": " + m.what;
  return m;
}

void record_layouts(const std::string& atom, const std::string& family, const std::vector<OperandMap>& operands,
                    const std::string& verdict, const std::string& method) {
  const char* dir = std::getenv("FLASHPROBE_RECORD_DIR");
  if (!dir || !*dir) return;
  auto j = record_header("probe");
  j["atom"] = atom;
  j["family"] = family;
  j["source"] = "hardware";
  j["method"] = method;
  j["verdict"] = verdict;
  j["operands"] = nlohmann::json::array();
  for (const auto& m : operands) {
    nlohmann::json at = nlohmann::json::array();
    for (const auto& c : m.at) at.push_back({c.row, c.col});
    // The operand name is the text before the first ':' of `what` (formula_map/named put it there).
    const auto colon = m.what.find(':');
    j["operands"].push_back({{"name", m.what.substr(0, colon)},
                             {"what", m.what},
                             {"lanes", m.lanes},
                             {"slots", m.slots},
                             {"rows", m.rows},
                             {"cols", m.cols},
                             {"at", at},
                             {"anomalies", m.anomalies}});
  }
  write_json_file(std::string(dir) + "/probe-" + atom + ".json", j);
}

}  // namespace flashprobe::nvidia::testing
