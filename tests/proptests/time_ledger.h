#pragma once
// Where the time of a property run goes (the gate's throughput question): building each case's
// inputs on the host, the kernel (run_kernel: upload, launch, download, guard and poison checks) and
// the oracle (double-precision reference and check); the kernel phase is split further into
// transfers (upload, download and the runner's checks) and the device's own time. The rest of a property's wall time is case
// generation, RapidCheck and the property's own host work. Per property the totals are printed and,
// when $FLASHPROBE_RECORD_DIR is set, kept in prop_throughput.json (schema flashprobe.prop_throughput/1).
#include <string>

namespace flashprobe::proptests {

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

void ledger_start(const std::string& kernel, const std::string& property);
void ledger_case();
// The kernel phase's parts as the runner measured them (RunResult::upload_s / device_s / download_s):
// allocation, upload and poisoning; launch to idle device; download and checks.
void ledger_kernel_parts(double upload_s, double device_s, double download_s);
void ledger_end();

}  // namespace flashprobe::proptests
