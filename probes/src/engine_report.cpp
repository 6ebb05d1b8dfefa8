// Text and JSON renderings of a probe result.
#include <nlohmann/json.hpp>
#include <sstream>

#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/formula.h"

namespace flashprobe::probes {

std::string k_labels_from(const ProbeResult& r) {
  if (!r.label_anchor.empty()) return "load path";
  return r.labels_from_expected ? "documented" : "canonical";
}

nlohmann::json observability(const ProbeResult& r) {
  const std::string from = k_labels_from(r);
  const std::string why =
      from == "load path" ? "derived from " + r.label_anchor + " (a load of a row-major tile gives absolute k)"
      : from == "documented"
          ? "taken from the documented layout: D = A*B cannot observe the absolute k order (any permutation of k "
            "shared by A and B gives the same D)"
          : "canonical first-appearance labels: no document or load path anchors k";
  const nlohmann::json k = {{"from", from}, {"why", why}};
  const std::string pairing = "k pairing with the other operand (which A slot meets which B slot)";
  return {{"A", {{"observed", {"row (shared with C/D)", pairing, "replicas and ignored slots"}}, {"k", k}}},
          {"B", {{"observed", {"column (shared with C/D)", pairing, "replicas and ignored slots"}}, {"k", k}}},
          {"C", {{"observed", {"row", "column", "pass-through of C"}}}}};
}

std::string report(const ProbeResult& r, bool with_grids) {
  std::ostringstream os;
  os << r.atom << "  [" << r.source << ": " << r.executor << "]\n";
  os << "  verdict: " << verdict_name(r.verdict)
     << (r.labels_from_expected ? "  (labels from the expected layout)"
                                : "  (labels canonical: rows and k by first appearance in A, columns in B)")
     << "\n";
  for (Operand op : {Operand::A, Operand::B, Operand::C})
    os << "  " << operand_name(op) << ": " << formula(r.derived.operand(op)).text() << "\n";
  os << "  observed: rows of A and C/D, columns of B and C/D, the A-B pairing of k; k labels of A and B: "
     << observability(r)["A"]["k"]["why"].get<std::string>() << "\n";
  for (const auto& c : r.checks)
    if (!c.ok) os << "  CHECK FAILED " << c.name << ": " << c.detail << "\n";
  if (r.checks_ok()) os << "  checks: all " << r.checks.size() << " passed\n";
  for (const auto& a : r.anomalies) os << "  anomaly: " << a << "\n";
  for (const auto& n : r.notes) os << "  note: " << n << "\n";
  if (!r.diff.empty()) os << "  diff (" << r.diff.size() << " slots):\n" << format_diff(r.diff);
  os << "  " << r.experiments << " experiments in " << r.executor_calls << " executor calls";
  if (r.packs_rerun) os << " (" << r.packs_rerun << " packs re-run as singles)";
  os << ", " << r.seconds * 1e3 << " ms\n";
  if (with_grids) os << "\n" << grid(r.derived) << "\n";
  return os.str();
}

void to_json(nlohmann::json& j, const ProbeResult& r) {
  nlohmann::json checks = nlohmann::json::array(), diffs = nlohmann::json::array(), formulas;
  for (const auto& c : r.checks) checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  for (const auto& d : r.diff) {
    auto coord = [](Coord c) { return c.ignored() ? nlohmann::json(nullptr) : nlohmann::json::array({c.row, c.col}); };
    diffs.push_back({{"operand", std::string(operand_name(d.op))}, {"lane", d.lane}, {"slot", d.slot},
                     {"expected", coord(d.expected)}, {"derived", coord(d.derived)}});
  }
  for (Operand op : {Operand::A, Operand::B, Operand::C}) {
    const Formula f = formula(r.derived.operand(op));
    formulas[op == Operand::C ? "C" : std::string(operand_name(op))] =
        f.linear ? nlohmann::json{{"linear", true}, {"row", f.row}, {"col", f.col}}
                 : nlohmann::json{{"linear", false}, {"reason", f.reason}};
  }
  j = {{"atom", r.atom},
       {"source", r.source},
       {"executor", r.executor},
       {"verdict", std::string(verdict_name(r.verdict))},
       {"ok", r.ok()},
       {"labels", r.labels_from_expected ? "expected" : "canonical"},
       {"observability", observability(r)},
       {"layout", r.derived},
       {"formulas", formulas},
       {"checks", checks},
       {"anomalies", r.anomalies},
       {"notes", r.notes},
       {"diff", diffs},
       {"c_to_d", r.c_to_d},
       {"executor_calls", r.executor_calls},
       {"experiments", r.experiments},
       {"packs_rerun", r.packs_rerun},
       {"seconds", r.seconds}};
}

}  // namespace flashprobe::probes
