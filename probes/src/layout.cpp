#include "flashprobe/probes/layout.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace flashprobe::probes {

std::string to_string(Coord c) {
  if (c.ignored()) return "ignored";
  // Built by appending: GCC 12's -Wrestrict misfires on "(" + std::to_string(...) in Release.
  std::string s = "(";
  s += std::to_string(c.row);
  s += ", ";
  s += std::to_string(c.col);
  s += ")";
  return s;
}

std::string_view operand_name(Operand op) { return op == Operand::A ? "A" : op == Operand::B ? "B" : "C/D"; }

OperandLayout::OperandLayout(int rows, int cols, int lanes, int slots)
    : rows_(rows), cols_(cols), lanes_(lanes), slots_(slots) {
  if (rows <= 0 || cols <= 0 || lanes <= 0 || slots <= 0)
    throw std::invalid_argument("OperandLayout: rows, cols, lanes and slots must be positive (got " +
                                std::to_string(rows) + "x" + std::to_string(cols) + ", " + std::to_string(lanes) +
                                " lanes, " + std::to_string(slots) + " slots)");
  table_.assign(static_cast<std::size_t>(lanes) * static_cast<std::size_t>(slots), kIgnored);
}

void OperandLayout::set(int lane, int slot, Coord c) {
  if (lane < 0 || lane >= lanes_ || slot < 0 || slot >= slots_)
    throw std::out_of_range("OperandLayout::set: (lane " + std::to_string(lane) + ", slot " + std::to_string(slot) +
                            ") outside " + std::to_string(lanes_) + " lanes x " + std::to_string(slots_) + " slots");
  if (!c.ignored() && (c.row >= rows_ || c.col < 0 || c.col >= cols_))
    throw std::out_of_range("OperandLayout::set: element " + to_string(c) + " outside " + std::to_string(rows_) +
                            "x" + std::to_string(cols_));
  if (c.ignored()) c = kIgnored;
  table_[static_cast<std::size_t>(flat(lane, slot))] = c;
}

std::vector<std::vector<int>> OperandLayout::holders() const {
  std::vector<std::vector<int>> h(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_));
  for (int i = 0; i < size(); ++i) {
    const Coord c = at_flat(i);
    if (!c.ignored()) h[static_cast<std::size_t>(c.row * cols_ + c.col)].push_back(i);
  }
  return h;
}

std::optional<int> OperandLayout::replica_of(int lane, int slot) const {
  const Coord c = at(lane, slot);
  if (c.ignored()) return std::nullopt;
  const int me = flat(lane, slot);
  for (int i = 0; i < me; ++i)
    if (at_flat(i) == c) return i;
  return std::nullopt;
}

std::vector<int> OperandLayout::ignored() const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i)
    if (at_flat(i).ignored()) out.push_back(i);
  return out;
}

std::vector<std::vector<int>> OperandLayout::replica_groups() const {
  std::vector<std::vector<int>> out;
  for (auto& h : holders())
    if (h.size() >= 2) out.push_back(h);
  std::sort(out.begin(), out.end());
  return out;
}

bool OperandLayout::covers_all() const {
  for (auto& h : holders())
    if (h.empty()) return false;
  return true;
}

bool OperandLayout::injective() const {
  for (auto& h : holders())
    if (h.size() > 1) return false;
  return true;
}

// ---- diff -------------------------------------------------------------------------------------

std::vector<SlotDiff> diff(const OperandLayout& e, const OperandLayout& d, Operand op) {
  if (e.rows() != d.rows() || e.cols() != d.cols() || e.lanes() != d.lanes() || e.slots() != d.slots())
    throw std::invalid_argument(std::string("diff: operand ") + std::string(operand_name(op)) +
                                " shapes differ (" + std::to_string(e.rows()) + "x" + std::to_string(e.cols()) +
                                " over " + std::to_string(e.lanes()) + "x" + std::to_string(e.slots()) + " vs " +
                                std::to_string(d.rows()) + "x" + std::to_string(d.cols()) + " over " +
                                std::to_string(d.lanes()) + "x" + std::to_string(d.slots()) + ")");
  std::vector<SlotDiff> out;
  for (int lane = 0; lane < e.lanes(); ++lane)
    for (int slot = 0; slot < e.slots(); ++slot)
      if (e.at(lane, slot) != d.at(lane, slot)) out.push_back({op, lane, slot, e.at(lane, slot), d.at(lane, slot)});
  return out;
}

std::vector<SlotDiff> diff(const MmaLayout& e, const MmaLayout& d) {
  std::vector<SlotDiff> out;
  for (Operand op : {Operand::A, Operand::B, Operand::C}) {
    auto part = diff(e.operand(op), d.operand(op), op);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

namespace {
std::string cell_name(int lane, int slot) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "T%02dV%d", lane, slot);
  return buf;
}
}  // namespace

std::string format_diff(const std::vector<SlotDiff>& d, std::size_t max_lines) {
  std::ostringstream os;
  for (std::size_t i = 0; i < d.size() && i < max_lines; ++i)
    os << operand_name(d[i].op) << " " << cell_name(d[i].lane, d[i].slot) << ": expected " << to_string(d[i].expected)
       << ", derived " << to_string(d[i].derived) << "\n";
  if (d.size() > max_lines) os << "... " << d.size() - max_lines << " more\n";
  return os.str();
}

// ---- grid -------------------------------------------------------------------------------------

namespace {
// Summarise a sorted list of flat indices as lane/slot ranges: "T16..T31 all slots" style would need
// structure detection; a compact list of cell names (first 12) is honest and short.
std::string list_cells(const OperandLayout& l, const std::vector<int>& flat, std::size_t max = 12) {
  std::string s;
  for (std::size_t i = 0; i < flat.size() && i < max; ++i) {
    if (i) s += " ";
    s += cell_name(flat[i] / l.slots(), flat[i] % l.slots());
  }
  if (flat.size() > max) s += " ... (" + std::to_string(flat.size()) + " in all)";
  return s;
}
}  // namespace

std::string grid(const OperandLayout& l, std::string_view title) {
  std::ostringstream os;
  const auto h = l.holders();
  std::size_t width = 5;
  for (auto& v : h)
    if (!v.empty()) width = std::max(width, cell_name(v[0] / l.slots(), v[0] % l.slots()).size() + (v.size() > 1));
  os << title << ": " << l.rows() << " x " << l.cols() << " over " << l.lanes() << " lanes x " << l.slots()
     << " slots (cell = T<lane>V<slot> of the primary holder, + = has replicas)\n";
  os << std::string(6, ' ');
  for (int c = 0; c < l.cols(); ++c) {
    std::string head = std::to_string(c);
    os << " " << std::string(width - std::min(width, head.size()), ' ') << head;
  }
  os << "\n";
  for (int r = 0; r < l.rows(); ++r) {
    std::string label = std::to_string(r);
    os << std::string(5 - std::min<std::size_t>(5, label.size()), ' ') << label << ":";
    for (int c = 0; c < l.cols(); ++c) {
      const auto& v = h[static_cast<std::size_t>(r * l.cols() + c)];
      std::string cell = v.empty() ? std::string(width, '-')
                                   : cell_name(v[0] / l.slots(), v[0] % l.slots()) + (v.size() > 1 ? "+" : "");
      os << " " << std::string(width - std::min(width, cell.size()), ' ') << cell;
    }
    os << "\n";
  }
  const auto groups = l.replica_groups();
  if (!groups.empty()) {
    std::size_t copies = 0;
    for (auto& g : groups) copies += g.size() - 1;
    os << "  replicas: " << copies << " slots replicate a primary; e.g.";
    for (std::size_t i = 0; i < groups.size() && i < 4; ++i) os << " {" << list_cells(l, groups[i], 4) << "}";
    os << "\n";
  }
  const auto ign = l.ignored();
  if (!ign.empty()) os << "  ignored: " << ign.size() << " slots: " << list_cells(l, ign) << "\n";
  return os.str();
}

std::string grid(const MmaLayout& l) {
  return grid(l.a, "A (M x K)") + "\n" + grid(l.b, "B (K x N)") + "\n" + grid(l.c, "C/D (M x N)");
}

}  // namespace flashprobe::probes
