#include <algorithm>
#include <set>
#include <stdexcept>

#include "expected_common.h"
#include "flashprobe/probes/atom.h"

namespace flashprobe::probes {

std::string_view vendor_name(Vendor v) { return v == Vendor::nvidia ? "nvidia" : "amd"; }

std::string Source::text() const {
  if (!documented()) return "none documented";
  return section.empty() ? title : title + ", " + section;
}

namespace {
struct Registry {
  std::vector<AtomDesc> mma;
  std::vector<LoadAtomDesc> load;
};
const Registry& registry() {
  static const Registry r = [] {
    Registry x;
    detail::add_nvidia_atoms(x.mma, x.load);
    detail::add_rdna3_atoms(x.mma);
    detail::add_rdna4_atoms(x.mma);
    detail::add_cdna_atoms(x.mma);
    std::set<std::string> names;
    for (auto& a : x.mma)
      if (!names.insert(a.name).second) throw std::logic_error("duplicate atom name " + a.name);
    for (auto& a : x.load)
      if (!names.insert(a.name).second) throw std::logic_error("duplicate atom name " + a.name);
    return x;
  }();
  return r;
}
}  // namespace

const std::vector<AtomDesc>& mma_atoms() { return registry().mma; }
const std::vector<LoadAtomDesc>& load_atoms() { return registry().load; }

const AtomDesc* find_mma_atom(std::string_view name) {
  for (auto& a : mma_atoms())
    if (a.name == name) return &a;
  return nullptr;
}
const LoadAtomDesc* find_load_atom(std::string_view name) {
  for (auto& a : load_atoms())
    if (a.name == name) return &a;
  return nullptr;
}
std::vector<std::string> atom_names() {
  std::vector<std::string> n;
  for (auto& a : mma_atoms()) n.push_back(a.name);
  for (auto& a : load_atoms()) n.push_back(a.name);
  return n;
}

namespace {
void check_operand(std::vector<std::string>& out, const std::string& what, const OperandLayout& l, int rows, int cols,
                   int lanes, int slots, bool injective) {
  if (l.rows() != rows || l.cols() != cols || l.lanes() != lanes || l.slots() != slots) {
    out.push_back(what + ": layout is " + std::to_string(l.rows()) + "x" + std::to_string(l.cols()) + " over " +
                  std::to_string(l.lanes()) + "x" + std::to_string(l.slots()) + ", descriptor says " +
                  std::to_string(rows) + "x" + std::to_string(cols) + " over " + std::to_string(lanes) + "x" +
                  std::to_string(slots));
    return;
  }
  if (!l.covers_all()) out.push_back(what + ": some element is held by no slot");
  if (injective && !l.injective()) out.push_back(what + ": some element is held twice");
}
}  // namespace

std::vector<std::string> validate(const AtomDesc& a) {
  std::vector<std::string> out;
  if (a.m <= 0 || a.n <= 0 || a.k <= 0 || a.wave <= 0 || a.a_slots <= 0 || a.b_slots <= 0 || a.c_slots <= 0)
    out.push_back("non-positive shape, wave or slot count");
  if (a.expected && out.empty()) {
    check_operand(out, "A", a.expected->a, a.m, a.k, a.wave, a.a_slots, false);
    check_operand(out, "B", a.expected->b, a.k, a.n, a.wave, a.b_slots, false);
    check_operand(out, "C/D", a.expected->c, a.m, a.n, a.wave, a.c_slots, true);
  }
  if (a.expected && !a.source.documented()) out.push_back("an expected layout needs its source document");
  return out;
}

std::vector<std::string> validate(const LoadAtomDesc& a) {
  std::vector<std::string> out;
  if (a.expected) check_operand(out, "loaded", *a.expected, a.rows, a.cols, a.wave, a.slots, false);
  if (a.expected && !a.source.documented()) out.push_back("an expected layout needs its source document");
  return out;
}

}  // namespace flashprobe::probes
