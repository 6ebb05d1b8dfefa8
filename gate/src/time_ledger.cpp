#include "flashprobe/gate/time_ledger.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "flashprobe/core/record.h"

namespace flashprobe::gate {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Ledger {
  bool open = false;
  std::string kernel, property, runner;
  long long cases = 0;
  double t0 = 0, phase[3] = {0, 0, 0};
  double upload = 0, device = 0, download = 0;
  std::vector<std::pair<std::string, long long>> paths;
};
Ledger g_ledger;
bool g_keep_record = true;
nlohmann::json g_rows = nlohmann::json::array();

}  // namespace

Timed::Timed(Phase p) : phase_(p), t0_(now_s()) {}
Timed::~Timed() {
  if (g_ledger.open) g_ledger.phase[static_cast<int>(phase_)] += now_s() - t0_;
}

void ledger_start(const std::string& kernel, const std::string& property, const std::string& runner) {
  g_ledger = Ledger{true, kernel, property, runner, 0, now_s(), {0, 0, 0}, 0, 0, 0, {}};
}

void ledger_case() { ++g_ledger.cases; }

void ledger_kernel_parts(double upload_s, double device_s, double download_s) {
  if (!g_ledger.open) return;
  g_ledger.upload += upload_s;
  g_ledger.device += device_s;
  g_ledger.download += download_s;
}

namespace {
void write_record() {
  if (!g_keep_record) return;
  if (const char* dir = std::getenv("FLASHPROBE_RECORD_DIR"); dir && *dir) {
    nlohmann::json rec = record_header("prop_throughput");
    if (const char* p = std::getenv("RC_PARAMS")) rec["rc_params"] = p;
    rec["rows"] = g_rows;
    write_json_file(std::string(dir) + "/prop_throughput.json", rec);
  }
}

}  // namespace

void ledger_keep_record(bool keep) { g_keep_record = keep; }

void ledger_skip(const std::string& kernel, const std::string& property, const std::string& reason) {
  std::printf("time %s/%s: skipped (%s)\n", kernel.c_str(), property.c_str(), reason.c_str());
  g_rows.push_back({{"kernel", kernel}, {"property", property}, {"status", "skipped"}, {"reason", reason.substr(0, 300)},
                    {"cases", 0}, {"cases_run", 0}});
  write_record();
}

void ledger_paths(const std::vector<std::pair<std::string, long long>>& cases_per_path) {
  if (g_ledger.open) g_ledger.paths = cases_per_path;
}

void ledger_end(std::string_view status, long long cases_run, const std::string& reason) {
  if (!g_ledger.open) return;
  Ledger& l = g_ledger;
  l.open = false;
  const double total = now_s() - l.t0, in = l.phase[0], k = l.phase[1], o = l.phase[2];
  const double rest = total - in - k - o;
  std::printf("time %s/%s: %lld cases in %.2f s (%.1f cases/s, %s runner): inputs %.0f%%, kernel %.0f%% (upload %.0f%%, "
              "device %.0f%%, download+checks %.0f%%), oracle %.0f%%, rest %.0f%%\n",
              l.kernel.c_str(), l.property.c_str(), l.cases, total, total > 0 ? double(l.cases) / total : 0.0, l.runner.c_str(),
              100 * in / total, 100 * k / total, 100 * l.upload / total, 100 * l.device / total,
              100 * l.download / total, 100 * o / total, 100 * rest / total);
  g_rows.push_back({{"kernel", l.kernel}, {"property", l.property}, {"cases", l.cases}, {"seconds", total},
                    {"inputs_s", in}, {"kernel_s", k}, {"oracle_s", o}, {"rest_s", rest},
                    {"kernel_upload_s", l.upload}, {"kernel_device_s", l.device}, {"kernel_download_s", l.download},
                    {"status", std::string(status)}, {"cases_run", cases_run < 0 ? l.cases : cases_run}, {"runner", l.runner}});
  if (!reason.empty()) g_rows.back()["reason"] = reason.substr(0, 300);
  if (!l.paths.empty()) {
    nlohmann::json paths = nlohmann::json::object();
    std::string line;
    for (const auto& [name, n] : l.paths) {
      paths[name] = n;
      line += (line.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    g_rows.back()["paths"] = paths;
    std::printf("paths %s/%s: %s\n", l.kernel.c_str(), l.property.c_str(), line.c_str());
  }
  write_record();
}

}  // namespace flashprobe::gate
