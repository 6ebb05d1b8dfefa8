#include "flashprobe/probes/formula.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace flashprobe::probes {

namespace {
int bits_for(int n) {  // smallest b with 2^b >= n
  int b = 0;
  while ((1 << b) < n) ++b;
  return b;
}
Coord xor_coord(Coord a, Coord b) { return Coord{a.row ^ b.row, a.col ^ b.col}; }
}  // namespace

LinearMap infer_linear(const OperandLayout& l) {
  LinearMap m;
  m.slot_bits = bits_for(l.slots());
  m.lane_bits = bits_for(l.lanes());
  const int nbits = m.slot_bits + m.lane_bits;
  // x = slot | lane << slot_bits; used(x) = the slot exists and is not ignored.
  const int space = 1 << nbits;
  std::vector<Coord> f(static_cast<std::size_t>(space), kIgnored);
  for (int lane = 0; lane < l.lanes(); ++lane)
    for (int slot = 0; slot < l.slots(); ++slot) f[static_cast<std::size_t>(slot | (lane << m.slot_bits))] = l.at(lane, slot);
  std::vector<Coord> image(static_cast<std::size_t>(nbits), Coord{0, 0});
  for (int b = 0; b < nbits; ++b) {
    const int bit = 1 << b;
    for (int x = 0; x < space; ++x) {
      if ((x & bit) || f[static_cast<std::size_t>(x)].ignored() || f[static_cast<std::size_t>(x | bit)].ignored()) continue;
      image[static_cast<std::size_t>(b)] = xor_coord(f[static_cast<std::size_t>(x)], f[static_cast<std::size_t>(x | bit)]);
      break;
    }
  }
  m.slot_image.assign(image.begin(), image.begin() + m.slot_bits);
  m.lane_image.assign(image.begin() + m.slot_bits, image.end());
  for (int x = 0; x < space; ++x) {
    const Coord want = f[static_cast<std::size_t>(x)];
    if (want.ignored()) continue;
    Coord got{0, 0};
    for (int b = 0; b < nbits; ++b)
      if (x & (1 << b)) got = xor_coord(got, image[static_cast<std::size_t>(b)]);
    if (got != want) {
      const int lane = x >> m.slot_bits, slot = x & ((1 << m.slot_bits) - 1);
      m.reason = "lane " + std::to_string(lane) + " slot " + std::to_string(slot) + " holds " + to_string(want) +
                 ", the XOR of its bits' images gives " + to_string(got);
      return m;
    }
  }
  m.linear = true;
  return m;
}

namespace {
struct Run {
  bool slot_var;  // else lane
  int in_lo, out_lo, len;
};

std::string term(const Run& r, int var_bits) {
  const std::string var = r.slot_var ? "slot" : "lane";
  std::string base = var;
  const bool shifted = r.in_lo > 0;
  const bool masked = r.in_lo + r.len < var_bits;
  if (shifted) base = "(" + var + " >> " + std::to_string(r.in_lo) + ")";
  if (masked) base = "(" + base + " & " + std::to_string((1 << r.len) - 1) + ")";
  if (r.out_lo > 0) return std::to_string(1 << r.out_lo) + "*" + base;
  return base;
}

// Print one output variable whose bit j is the XOR of input bits inputs[j] (input bit b < slot_bits
// is slot bit b, else lane bit b - slot_bits).
std::string print_output(const std::vector<std::vector<int>>& inputs, int slot_bits, int lane_bits) {
  std::size_t layers = 0;
  for (auto& v : inputs) layers = std::max(layers, v.size());
  if (layers == 0) return "0";
  std::vector<std::string> layer_exprs;
  for (std::size_t t = 0; t < layers; ++t) {
    std::vector<Run> runs;
    for (int j = 0; j < static_cast<int>(inputs.size()); ++j) {
      if (inputs[static_cast<std::size_t>(j)].size() <= t) continue;
      const int b = inputs[static_cast<std::size_t>(j)][t];
      const bool sv = b < slot_bits;
      const int in = sv ? b : b - slot_bits;
      if (!runs.empty()) {
        Run& last = runs.back();
        if (last.slot_var == sv && last.out_lo + last.len == j && last.in_lo + last.len == in) {
          ++last.len;
          continue;
        }
      }
      runs.push_back({sv, in, j, 1});
    }
    // slot terms first, then lane terms, each by input bit: "2*slot + (lane >> 4)".
    std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
      if (a.slot_var != b.slot_var) return a.slot_var;
      return a.in_lo < b.in_lo;
    });
    std::string e;
    for (auto& r : runs) {
      if (!e.empty()) e += " + ";
      e += term(r, r.slot_var ? slot_bits : lane_bits);
    }
    if (runs.size() == 1 && e.front() == '(' && e.back() == ')' && layers == 1) {
      // A lone masked/shifted field needs no outer parentheses: "lane & 15".
      int depth = 0;
      bool outer = true;
      for (std::size_t i = 0; i < e.size(); ++i) {
        depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
        if (depth == 0 && i + 1 < e.size()) outer = false;
      }
      if (outer) e = e.substr(1, e.size() - 2);
    }
    layer_exprs.push_back(layers > 1 && runs.size() > 1 ? "(" + e + ")" : e);
  }
  std::string out;
  for (auto& e : layer_exprs) out += (out.empty() ? "" : " ^ ") + e;
  return out;
}
}  // namespace

std::string Formula::text() const {
  if (!linear) return "not linear over GF(2) (" + reason + ")";
  return "row = " + row + "; col = " + col;
}

Formula formula(const OperandLayout& l) {
  Formula f;
  const LinearMap m = infer_linear(l);
  if (!m.linear) {
    f.reason = m.reason;
    return f;
  }
  f.linear = true;
  const int row_bits = bits_for(l.rows()), col_bits = bits_for(l.cols());
  std::vector<std::vector<int>> row_in(static_cast<std::size_t>(row_bits)), col_in(static_cast<std::size_t>(col_bits));
  const int nbits = m.slot_bits + m.lane_bits;
  for (int b = 0; b < nbits; ++b) {
    const Coord img = b < m.slot_bits ? m.slot_image[static_cast<std::size_t>(b)]
                                      : m.lane_image[static_cast<std::size_t>(b - m.slot_bits)];
    for (int j = 0; j < row_bits; ++j)
      if ((img.row >> j) & 1) row_in[static_cast<std::size_t>(j)].push_back(b);
    for (int j = 0; j < col_bits; ++j)
      if ((img.col >> j) & 1) col_in[static_cast<std::size_t>(j)].push_back(b);
  }
  f.row = print_output(row_in, m.slot_bits, m.lane_bits);
  f.col = print_output(col_in, m.slot_bits, m.lane_bits);
  return f;
}

// ---- evaluator --------------------------------------------------------------------------------
namespace {
class Parser {
 public:
  Parser(std::string_view s, long lane, long slot) : s_(s), lane_(lane), slot_(slot) {}
  long parse() {
    const long v = bitor_();
    skip();
    if (pos_ != s_.size()) fail("unexpected character");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw std::invalid_argument("eval_expr: " + std::string(what) + " at position " + std::to_string(pos_) + " in \"" +
                                std::string(s_) + "\"");
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view op) {
    skip();
    if (s_.substr(pos_, op.size()) == op) {
      pos_ += op.size();
      return true;
    }
    return false;
  }
  long bitor_() {
    long v = bitxor_();
    while (eat("|")) v |= bitxor_();
    return v;
  }
  long bitxor_() {
    long v = bitand_();
    while (eat("^")) v ^= bitand_();
    return v;
  }
  long bitand_() {
    long v = shift_();
    while (eat("&")) v &= shift_();
    return v;
  }
  long shift_() {
    long v = add_();
    for (;;) {
      if (eat("<<")) v <<= add_();
      else if (eat(">>")) v >>= add_();
      else return v;
    }
  }
  long add_() {
    long v = mul_();
    for (;;) {
      if (eat("+")) v += mul_();
      else if (eat("-")) v -= mul_();
      else return v;
    }
  }
  long mul_() {
    long v = atom_();
    while (eat("*")) v *= atom_();
    return v;
  }
  long atom_() {
    skip();
    if (eat("(")) {
      const long v = bitor_();
      if (!eat(")")) fail("missing ')'");
      return v;
    }
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      long v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) v = v * 10 + (s_[pos_++] - '0');
      return v;
    }
    if (eat("lane")) return lane_;
    if (eat("slot")) return slot_;
    fail("expected a number, lane, slot or '('");
  }
  std::string_view s_;
  std::size_t pos_ = 0;
  long lane_, slot_;
};
}  // namespace

long eval_expr(std::string_view expr, long lane, long slot) { return Parser(expr, lane, slot).parse(); }

}  // namespace flashprobe::probes
