#pragma once
// Shared pieces of the calibration programs (calibrate_tolerance.cpp, calibrate_backward.cpp).
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace flashprobe::bench {

// The q-quantile of v (0 for an empty v): the element at rank floor(q * n), clamped to the last.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// run(i) for i in [0, n) on every hardware thread; the results concatenated in the order of i.
template <class Sample, class Run>
std::vector<Sample> run_problems(int n, Run run) {
  std::vector<std::vector<Sample>> per(static_cast<std::size_t>(n));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i; (i = next.fetch_add(1)) < n;) per[static_cast<std::size_t>(i)] = run(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  std::vector<Sample> all;
  for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
  return all;
}

// The options of both calibration programs: --problems N --seed S --max-macs M --out FILE, and
// --inputs MODE for a program that lists its input modes (the first is the default).
struct CalibrationArgs {
  int problems = 0;
  std::uint64_t seed = 1;
  double max_macs = 0;
  std::string out;
  std::vector<std::string> input_modes;  // empty: no --inputs option
  std::string inputs;                    // one of input_modes (input_modes[0] unless given)
};

// Reads argv[1..] into `a`, which holds the program's defaults. Returns "" or the message to print
// before exiting with code 2: an unknown option, a missing value, a value that is not a number of the
// option's kind, --problems < 1, --max-macs not a finite number > 0 or --inputs not one of input_modes.
inline std::string parse_calibration_args(int argc, char** argv, CalibrationArgs& a) {
  const bool has_inputs = !a.input_modes.empty();
  const std::string known = std::string("(known: --problems --seed --max-macs --out") + (has_inputs ? " --inputs)" : ")");
  if (has_inputs && a.inputs.empty()) a.inputs = a.input_modes.front();
  for (int i = 1; i < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt != "--problems" && opt != "--seed" && opt != "--max-macs" && opt != "--out" && !(has_inputs && opt == "--inputs"))
      return "unknown option " + opt + " " + known;
    if (i + 1 >= argc) return opt + " needs a value";
    const std::string v = argv[i + 1];
    const char* b = v.data();
    const char* e = v.data() + v.size();
    auto bad = [&](const std::string& allowed) { return opt + " " + v + ": not allowed, use " + allowed; };
    if (opt == "--problems") {
      auto r = std::from_chars(b, e, a.problems);
      if (r.ec != std::errc{} || r.ptr != e || a.problems < 1) return bad("an integer >= 1");
    } else if (opt == "--seed") {
      auto r = std::from_chars(b, e, a.seed);
      if (r.ec != std::errc{} || r.ptr != e) return bad("an integer in [0, 2^64)");
    } else if (opt == "--max-macs") {
      char* end = nullptr;
      a.max_macs = v.empty() ? 0 : std::strtod(b, &end);
      if (v.empty() || end != e || !std::isfinite(a.max_macs) || a.max_macs <= 0) return bad("a number > 0 (e.g. 3e5)");
    } else if (opt == "--inputs") {
      if (std::find(a.input_modes.begin(), a.input_modes.end(), v) == a.input_modes.end()) {
        std::string modes;
        for (const auto& m : a.input_modes) modes += (modes.empty() ? "" : ", ") + m;
        return bad("one of " + modes);
      }
      a.inputs = v;
    } else {
      a.out = v;
    }
  }
  return "";
}

}  // namespace flashprobe::bench
