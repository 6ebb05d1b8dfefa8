// JSON round trip and C++ constexpr emission of layouts.
#include <cctype>
#include <cstdint>
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

namespace {
[[noreturn]] void bad_layout(const std::string& what) { throw UsageError("layout JSON: " + what); }

// A JSON integer (not 2.0, not true) in [lo, hi].
int integer(const nlohmann::json& v, const std::string& where, int lo, int hi) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)))
    bad_layout("\"" + where + "\" must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi)
    bad_layout("\"" + where + "\" must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return static_cast<int>(x);
}
// Bounds of a matrix-instruction operand (the largest, wgmma's C, is 64 x 256 over 128 lanes x 128 slots).
constexpr int kMaxExtent = 4096, kMaxLanes = 1024, kMaxSlots = 4096;
}  // namespace

void from_json(const nlohmann::json& j, OperandLayout& l) {
  if (!j.is_object()) bad_layout("an operand layout must be an object, got " + j.dump().substr(0, 80));
  for (const char* key : {"rows", "cols", "lanes", "slots", "table"})
    if (!j.contains(key)) bad_layout(std::string("an operand layout needs \"") + key + "\"");
  const int rows = integer(j.at("rows"), "rows", 1, kMaxExtent), cols = integer(j.at("cols"), "cols", 1, kMaxExtent);
  const int lanes = integer(j.at("lanes"), "lanes", 1, kMaxLanes), slots = integer(j.at("slots"), "slots", 1, kMaxSlots);
  const auto& table = j.at("table");
  const std::int64_t size = std::int64_t{lanes} * slots;
  if (!table.is_array() || static_cast<std::int64_t>(table.size()) != size)  // before anything is allocated
    bad_layout("\"table\" must hold lanes*slots = " + std::to_string(size) + " entries");
  OperandLayout out(rows, cols, lanes, slots);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& e = table[i];
    if (e.is_null()) continue;
    const std::string where = "table[" + std::to_string(i) + "]";
    if (!e.is_array() || e.size() != 2) bad_layout("\"" + where + "\" must be [row, col] or null, got " + e.dump().substr(0, 80));
    out.set_flat(static_cast<int>(i), Coord{integer(e[0], where + "[0]", 0, rows - 1), integer(e[1], where + "[1]", 0, cols - 1)});
  }
  l = std::move(out);
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
