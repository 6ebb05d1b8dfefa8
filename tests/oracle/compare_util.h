#pragma once
// Assertions shared by the oracle tests: two attention results agree to a relative tolerance, with
// identical -inf LSE rows.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace flashprobe::test {

// "" when a and b agree: |a - b| <= rel * max(1, max|b|) elementwise, nonfinite values identical.
template <class A, class B>
std::string agree(const std::vector<A>& a, const std::vector<B>& b, double rel, const char* what) {
  if (a.size() != b.size()) return std::string(what) + ": sizes differ";
  double scale = 1;
  for (auto v : b)
    if (std::isfinite(static_cast<double>(v))) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (!(x == y || (std::isnan(x) && std::isnan(y))))
        return std::string(what) + "[" + std::to_string(i) + "]: " + std::to_string(x) + " vs " + std::to_string(y);
      continue;
    }
    if (std::abs(x - y) > rel * scale)
      return std::string(what) + "[" + std::to_string(i) + "]: " + std::to_string(x) + " vs " + std::to_string(y) +
             " (diff " + std::to_string(std::abs(x - y)) + ")";
  }
  return "";
}

}  // namespace flashprobe::test
