#include "flashprobe/probes/load_path.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "flashprobe/probes/formula.h"

namespace flashprobe::probes {

namespace {
std::string cell(int lane, int slot) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "T%02dV%d", lane, slot);
  return buf;
}
}  // namespace

std::vector<double> load_encoding(const LoadAtomDesc& atom) { return exact_values({atom.type}, atom.rows * atom.cols); }
std::vector<double> store_encoding(const LoadAtomDesc& atom) { return exact_values({atom.type}, atom.wave * atom.slots); }

LoadProbeResult infer_load_path(const LoadAtomDesc& atom, const std::vector<double>& fragments) {
  LoadProbeResult r;
  r.atom = atom.name;
  r.derived = OperandLayout(atom.rows, atom.cols, atom.wave, atom.slots);
  if (static_cast<int>(fragments.size()) != atom.wave * atom.slots)
    throw std::invalid_argument("infer_load_path(" + atom.name + "): " + std::to_string(fragments.size()) +
                                " fragment values, expected wave * slots = " + std::to_string(atom.wave * atom.slots));
  const auto enc = load_encoding(atom);
  std::map<double, int> index;
  for (std::size_t i = 0; i < enc.size(); ++i) index[enc[i]] = static_cast<int>(i);
  std::vector<char> seen(enc.size(), 0);
  for (int i = 0; i < atom.wave * atom.slots; ++i) {
    const double v = fragments[static_cast<std::size_t>(i)];
    if (v == 0) continue;
    auto it = index.find(v);
    if (it == index.end()) {
      r.anomalies.push_back(cell(i / atom.slots, i % atom.slots) + " holds " + std::to_string(v) +
                            ", which is no element of the encoded matrix");
      continue;
    }
    seen[static_cast<std::size_t>(it->second)] = 1;
    r.derived.set_flat(i, Coord{it->second / atom.cols, it->second % atom.cols});
  }
  for (std::size_t e = 0; e < seen.size(); ++e)
    if (!seen[e]) r.unloaded.push_back(Coord{static_cast<int>(e) / atom.cols, static_cast<int>(e) % atom.cols});
  if (atom.expected) {
    r.diff = diff(*atom.expected, r.derived, Operand::A);
    r.verdict = r.diff.empty() ? Verdict::matches : Verdict::differs;
  }
  return r;
}

LoadProbeResult probe_load(const LoadAtomDesc& atom, LoadExecutor& ex) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> frags;
  ex.run(load_encoding(atom), frags);
  LoadProbeResult r = infer_load_path(atom, frags);
  r.source = ex.source();
  r.executor = ex.description();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

OperandLayout infer_store_path(const LoadAtomDesc& atom, const std::vector<double>& memory,
                               std::vector<std::string>& anomalies) {
  OperandLayout l(atom.rows, atom.cols, atom.wave, atom.slots);
  const auto enc = store_encoding(atom);
  std::map<double, int> index;
  for (std::size_t i = 0; i < enc.size(); ++i) index[enc[i]] = static_cast<int>(i);
  for (int e = 0; e < atom.rows * atom.cols; ++e) {
    const double v = memory.at(static_cast<std::size_t>(e));
    auto it = index.find(v);
    if (it == index.end()) {
      anomalies.push_back("memory (" + std::to_string(e / atom.cols) + ", " + std::to_string(e % atom.cols) +
                          ") holds " + std::to_string(v) + ", which no fragment slot carried");
      continue;
    }
    l.set_flat(it->second, Coord{e / atom.cols, e % atom.cols});
  }
  return l;
}

void SimulatedLoader::run(const std::vector<double>& memory, std::vector<double>& fragments) {
  fragments.assign(static_cast<std::size_t>(layout_.size()), 0.0);
  for (int i = 0; i < layout_.size(); ++i) {
    const Coord c = layout_.at_flat(i);
    if (!c.ignored()) fragments[static_cast<std::size_t>(i)] = memory.at(static_cast<std::size_t>(c.row * layout_.cols() + c.col));
  }
}

void to_json(nlohmann::json& j, const LoadProbeResult& r) {
  const Formula f = formula(r.derived);
  nlohmann::json diffs = nlohmann::json::array(), unloaded = nlohmann::json::array();
  for (const auto& d : r.diff)
    diffs.push_back({{"lane", d.lane}, {"slot", d.slot}, {"expected", to_string(d.expected)}, {"derived", to_string(d.derived)}});
  for (Coord c : r.unloaded) unloaded.push_back({c.row, c.col});
  j = {{"atom", r.atom},
       {"kind", "load"},
       {"source", r.source},
       {"executor", r.executor},
       {"verdict", std::string(verdict_name(r.verdict))},
       {"ok", r.ok()},
       {"labels", "absolute"},
       {"layout", r.derived},
       {"formula", f.linear ? nlohmann::json{{"linear", true}, {"row", f.row}, {"col", f.col}}
                            : nlohmann::json{{"linear", false}, {"reason", f.reason}}},
       {"anomalies", r.anomalies},
       {"unloaded", unloaded},
       {"diff", diffs},
       {"seconds", r.seconds}};
}

std::string report(const LoadProbeResult& r, bool with_grids) {
  std::ostringstream os;
  os << r.atom << "  [" << r.source << ": " << r.executor << "]\n";
  os << "  verdict: " << verdict_name(r.verdict) << "  (labels absolute: memory row, col)\n";
  os << "  loaded: " << formula(r.derived).text() << "\n";
  for (const auto& a : r.anomalies) os << "  anomaly: " << a << "\n";
  if (!r.unloaded.empty()) os << "  " << r.unloaded.size() << " memory elements reached no slot\n";
  if (!r.diff.empty()) os << "  diff (" << r.diff.size() << " slots):\n" << format_diff(r.diff);
  if (with_grids) os << "\n" << grid(r.derived, "loaded matrix (row x col)") << "\n";
  return os.str();
}

}  // namespace flashprobe::probes
