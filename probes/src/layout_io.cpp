// JSON round trip and C++ constexpr emission of layouts.
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flashprobe/core/error.h"
#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/layout.h"

namespace flashprobe::probes {

void to_json(nlohmann::json& j, const OperandLayout& l) {
  nlohmann::json table = nlohmann::json::array();
  for (int i = 0; i < l.size(); ++i) {
    const Coord c = l.at_flat(i);
    table.push_back(c.ignored() ? nlohmann::json(nullptr) : nlohmann::json::array({c.row, c.col}));
  }
  j = {{"rows", l.rows()}, {"cols", l.cols()}, {"lanes", l.lanes()}, {"slots", l.slots()}, {"table", table}};
}

void from_json(const nlohmann::json& j, OperandLayout& l) {
  try {
    OperandLayout out(j.at("rows").get<int>(), j.at("cols").get<int>(), j.at("lanes").get<int>(),
                      j.at("slots").get<int>());
    const auto& table = j.at("table");
    if (!table.is_array() || static_cast<int>(table.size()) != out.size())
      throw UsageError("layout JSON: \"table\" must hold lanes*slots = " + std::to_string(out.size()) + " entries");
    for (int i = 0; i < out.size(); ++i) {
      const auto& e = table[static_cast<std::size_t>(i)];
      if (e.is_null()) continue;
      out.set_flat(i, Coord{e.at(0).get<int>(), e.at(1).get<int>()});
    }
    l = std::move(out);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("layout JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("layout JSON: ") + e.what());
  } catch (const std::out_of_range& e) {
    throw UsageError(std::string("layout JSON: ") + e.what());
  }
}

void to_json(nlohmann::json& j, const MmaLayout& l) { j = {{"A", l.a}, {"B", l.b}, {"C", l.c}}; }

void from_json(const nlohmann::json& j, MmaLayout& l) {
  if (!j.is_object() || !j.contains("A") || !j.contains("B") || !j.contains("C"))
    throw UsageError("layout JSON: an MMA layout needs the keys \"A\", \"B\" and \"C\"");
  j.at("A").get_to(l.a);
  j.at("B").get_to(l.b);
  j.at("C").get_to(l.c);
}

std::string emit_constexpr(const OperandLayout& l, std::string_view name) {
  std::string table_name = "k";
  for (std::size_t i = 0; i < name.size(); ++i)
    table_name += static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(name[i])) : name[i]);
  std::ostringstream os;
  const Formula f = formula(l);
  os << "// " << name << ": (lane, slot) -> {row, col} of a " << l.rows() << "x" << l.cols() << " matrix over "
     << l.lanes() << " lanes x " << l.slots() << " slots; {-1, -1} = ignored.\n";
  os << "// " << f.text() << "\n";
  os << "inline constexpr std::array<std::array<short, 2>, " << l.size() << "> " << table_name << " = {{";
  for (int i = 0; i < l.size(); ++i) {
    const Coord c = l.at_flat(i);
    os << (i % 8 == 0 ? "\n    " : " ") << "{" << c.row << ", " << c.col << "}" << (i + 1 < l.size() ? "," : "");
  }
  os << "}};\n";
  os << "constexpr std::array<short, 2> " << name << "(int lane, int slot) {\n";
  if (f.linear) {
    os << "  if (" << table_name << "[lane * " << l.slots() << " + slot][0] < 0) return {-1, -1};\n";
    os << "  return {static_cast<short>(" << f.row << "), static_cast<short>(" << f.col << ")};\n";
  } else {
    os << "  return " << table_name << "[lane * " << l.slots() << " + slot];\n";
  }
  os << "}\n";
  // The formula and the table must agree: checked when the snippet is compiled.
  os << "static_assert([] {\n  for (int lane = 0; lane < " << l.lanes() << "; ++lane)\n    for (int slot = 0; slot < "
     << l.slots() << "; ++slot)\n      if (" << name << "(lane, slot) != " << table_name << "[lane * " << l.slots()
     << " + slot]) return false;\n  return true;\n}(), \"" << name << ": formula and table disagree\");\n";
  return os.str();
}

std::string emit_constexpr(const MmaLayout& l, std::string_view name) {
  const std::string n(name);
  return emit_constexpr(l.a, n + "_a") + "\n" + emit_constexpr(l.b, n + "_b") + "\n" + emit_constexpr(l.c, n + "_c");
}

}  // namespace flashprobe::probes
