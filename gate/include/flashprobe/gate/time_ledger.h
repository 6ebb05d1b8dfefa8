#pragma once
// Where the time of a property run goes (the gate's throughput question): making each case's
// inputs (on the device and downloaded: kernels/input_fill.h), the kernel (run_kernel: upload, launch, download, guard and poison checks) and
// the oracle (double-precision reference and check); the kernel phase is split further into
// transfers (upload, download and the runner's checks) and the device's own time. The rest of a property's wall time is case
// generation, RapidCheck and the property's own host work. Per property the totals are printed and,
// when $FLASHPROBE_RECORD_DIR is set, kept in prop_throughput.json (schema flashprobe.prop_throughput/1),
// one row per kernel x property with its status (passed, failed, skipped), the cases that ran to the
// end (cases_run; `cases` counts every call, shrinking included) and the reason of a skip or failure.
#include <string>
#include <utility>
#include <vector>
#include <string_view>

namespace flashprobe::gate {

enum class Phase { inputs, kernel, oracle };

// Adds the time of its scope to a phase of the current ledger (no-op outside ledger_start/_end).
class Timed {
 public:
  explicit Timed(Phase p);
  ~Timed();
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Phase phase_;
  double t0_;
};

// runner: the subject's device runner (Subject::runner: "per-case" or "arena"), kept in the row.
void ledger_start(const std::string& kernel, const std::string& property, const std::string& runner = "per-case");
void ledger_case();
// The kernel phase's parts as the runner measured them (RunResult::upload_s / device_s / download_s):
// allocation, upload and poisoning; launch to idle device; download and checks.
void ledger_kernel_parts(double upload_s, double device_s, double download_s);
// The cases that ran to the end on each of the kernel's paths (kernel_domain.h: kernel_paths), for the
// row's "paths" object and a line "paths K/P: class 64/64 40, ..." (none for a kernel without paths).
void ledger_paths(const std::vector<std::pair<std::string, long long>>& cases_per_path);
// status: gate_status_name() of the run's verdict; reason: the verdict's why (first 300 characters kept).
void ledger_end(std::string_view status = "passed", long long cases_run = -1, const std::string& reason = "");
// A kernel x property that did not run: a row with status "skipped", its reason and no times.
void ledger_skip(const std::string& kernel, const std::string& property, const std::string& reason);
// Whether rows go to $FLASHPROBE_RECORD_DIR/prop_throughput.json (default true: the GoogleTest
// suites' record). `flashprobe gate` turns it off: its record is --json, and several gate commands in
// one record folder would overwrite a test binary's ledger.
void ledger_keep_record(bool keep);

}  // namespace flashprobe::gate
