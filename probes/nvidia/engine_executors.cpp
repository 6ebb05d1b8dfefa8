// The NVIDIA instructions behind the probe engine's interfaces (executor.h, load_path.h): one
// adapter per family, registered under the engine registry's atom names by
// register_nvidia_executors(), which src/hardware_registration.cpp calls in the cuda tree.
//
// The engine speaks doubles laid out [experiment][lane][slot]; the launchers (executors.h) take
// floats in the same order. Every value the engine hands out is exact in the operand type
// (elem_type.h), so double -> float is exact, and the launchers re-check exactness in the element
// type before anything runs.
//
// wgmma B is not a register operand: the engine's [lane][slot] B is the executor's staging order,
// declared in the registry (expected_nvidia.cpp) as element e = lane * (N/8) + slot holding
// B[k = e % 16][n = e / 16]; here it becomes the logical [16][N] matrix that the launcher writes to
// shared memory K-major. The probe then checks that the hardware reads B as staged.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/half.h"
#include "flashprobe/probes/executor.h"
#include "flashprobe/probes/hardware_probe.h"
#include "flashprobe/probes/load_path.h"
#include "flashprobe/probes/nvidia/executors.h"
#include "nvidia_atoms.h"

namespace flashprobe::nvidia::detail {
void wgmma_b_logical(const double* staged, int n, float* logical) {
  constexpr int kK = 16;
  for (int e = 0; e < kK * n; ++e) logical[(e % kK) * n + e / kK] = static_cast<float>(staged[e]);
}
}  // namespace flashprobe::nvidia::detail

namespace flashprobe::probes {
namespace nv = flashprobe::nvidia;

namespace {

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

std::string device_line() {
  const DeviceInfo dev = require_device();
  return dev.name + " " + dev.arch;
}

class MmaSyncExecutor final : public Executor {
 public:
  MmaSyncExecutor(nv::MmaSyncOp op, std::string what) : op_(op), what_(device_line() + ", " + std::move(what)) {}
  std::string source() const override { return "hardware"; }
  std::string description() const override { return what_; }
  void run(const FragmentBatch& batch, std::vector<double>& d) override {
    const auto a = to_float(batch.a_data), b = to_float(batch.b_data), c = to_float(batch.c_data);
    std::vector<float> out(batch.d_size());
    nv::run_mma_sync(op_, batch.count, a, b, c, out);
    d.assign(out.begin(), out.end());
  }

 private:
  nv::MmaSyncOp op_;
  std::string what_;
};

class WmmaExecutor final : public Executor {
 public:
  explicit WmmaExecutor(const nv::WmmaConfig& cfg) : cfg_(cfg), what_(device_line() + ", nvcuda::wmma::mma_sync " + nv::name(cfg)) {}
  std::string source() const override { return "hardware"; }
  std::string description() const override { return what_; }
  void run(const FragmentBatch& batch, std::vector<double>& d) override {
    const auto a = to_float(batch.a_data), b = to_float(batch.b_data), c = to_float(batch.c_data);
    std::vector<float> out(batch.d_size());
    nv::run_wmma_mma(cfg_, batch.count, a, b, c, out);
    d.assign(out.begin(), out.end());
  }

 private:
  nv::WmmaConfig cfg_;
  std::string what_;
};

class WgmmaExecutor final : public Executor {
 public:
  explicit WgmmaExecutor(int n) : n_(n), what_(device_line() + ", wgmma.mma_async m64n" + std::to_string(n) + "k16 (A in registers)") {}
  std::string source() const override { return "hardware"; }
  std::string description() const override { return what_; }
  void run(const FragmentBatch& batch, std::vector<double>& d) override {
    const std::size_t staged = static_cast<std::size_t>(batch.wave) * batch.b_slots;  // 16 * N
    std::vector<float> b(static_cast<std::size_t>(batch.count) * staged);
    for (int e = 0; e < batch.count; ++e) nv::detail::wgmma_b_logical(batch.b(e), n_, b.data() + e * staged);
    const auto a = to_float(batch.a_data), c = to_float(batch.c_data);
    std::vector<float> out(batch.d_size());
    nv::run_wgmma({n_, false}, batch.count, a, b, c, out);
    d.assign(out.begin(), out.end());
  }

 private:
  int n_;
  std::string what_;
};

// ldmatrix: the loaded stack's row r sits in shared row r and thread r supplies its address; the
// threads beyond the documented 8 * matrices supply rows full of NaN, so a row used from one of
// them would show up as an anomaly rather than as a plausible element.
class LdmatrixExecutor final : public LoadExecutor {
 public:
  explicit LdmatrixExecutor(const nv::LdmatrixConfig& cfg)
      : cfg_(cfg), what_(device_line() + ", ldmatrix " + nv::name(cfg)) {}
  std::string source() const override { return "hardware"; }
  std::string description() const override { return what_; }
  void run(const std::vector<double>& memory, std::vector<double>& fragments) override {
    constexpr int kRows = 32, kCols = 8;
    constexpr std::uint16_t kNanBits = 0x7E00;
    const int loaded = 8 * cfg_.matrices;
    if (memory.size() != static_cast<std::size_t>(loaded) * kCols)
      throw std::invalid_argument("ldmatrix executor: " + std::to_string(memory.size()) + " memory values, expected " +
                                  std::to_string(loaded * kCols));
    std::vector<std::uint16_t> rows(kRows * kCols, kNanBits);
    for (std::size_t i = 0; i < memory.size(); ++i) rows[i] = to_f16_bits(memory[i]);
    std::vector<int> row_of_thread(32);
    for (int t = 0; t < 32; ++t) row_of_thread[static_cast<std::size_t>(t)] = t;
    std::vector<std::uint32_t> regs(static_cast<std::size_t>(32) * cfg_.matrices);
    nv::run_ldmatrix(cfg_, 1, rows, row_of_thread, regs);
    const int slots = 2 * cfg_.matrices;
    fragments.assign(static_cast<std::size_t>(32) * slots, 0.0);
    for (int lane = 0; lane < 32; ++lane)
      for (int s = 0; s < slots; ++s) {
        const std::uint32_t r = regs[static_cast<std::size_t>(lane) * cfg_.matrices + s / 2];
        fragments[static_cast<std::size_t>(lane) * slots + s] =
            from_f16_bits(static_cast<std::uint16_t>((r >> (16 * (s & 1))) & 0xFFFF));
      }
  }

 private:
  nv::LdmatrixConfig cfg_;
  std::string what_;
};

// Factories run when a probe starts, so a missing device or wrong arch declines with the reason.
template <class Make>
ExecutorFactory mma_factory(Make make) {
  return [make](const AtomDesc& atom, std::string& why) -> std::unique_ptr<Executor> {
    try {
      return make(atom, why);
    } catch (const std::exception& e) {
      why = e.what();
      return nullptr;
    }
  };
}

}  // namespace

void register_nvidia_executors() {
  for (nv::MmaSyncOp op : nv::detail::kMmaSyncOps)
    register_executor(nv::name(op), mma_factory([op](const AtomDesc& atom, std::string&) -> std::unique_ptr<Executor> {
                        return std::make_unique<MmaSyncExecutor>(op, atom.notes);
                      }));
  for (const nv::WmmaConfig& cfg : nv::detail::wmma_configs()) {
    register_executor(nv::name(cfg), mma_factory([cfg](const AtomDesc& atom, std::string& why) -> std::unique_ptr<Executor> {
                        // The registry's slot counts are CUDA's num_elements; the device's build decides.
                        const nv::Slots s = nv::wmma_slots(cfg);
                        if (s.a != atom.a_slots || s.b != atom.b_slots || s.c != atom.c_slots) {
                          why = "the fragments of " + atom.name + " hold " + std::to_string(s.a) + "/" +
                                std::to_string(s.b) + "/" + std::to_string(s.c) +
                                " elements (A/B/C) on this device; the registry declares " +
                                std::to_string(atom.a_slots) + "/" + std::to_string(atom.b_slots) + "/" +
                                std::to_string(atom.c_slots);
                          return nullptr;
                        }
                        return std::make_unique<WmmaExecutor>(cfg);
                      }));
    register_memory_paths(nv::name(cfg), [cfg](const AtomDesc& atom) { return nv::detail::wmma_memory_paths(cfg, atom); });
  }
  for (int n : nv::kWgmmaN)
    register_executor(nv::name(nv::WgmmaConfig{n, false}),
                      mma_factory([n](const AtomDesc& atom, std::string& why) -> std::unique_ptr<Executor> {
                        std::string arch_why;
                        if (!nv::wgmma_supported(require_device(), &arch_why)) {
                          why = atom.name + ": " + arch_why;
                          return nullptr;
                        }
                        return std::make_unique<WgmmaExecutor>(n);
                      }));
  for (const nv::LdmatrixConfig& cfg : nv::detail::kLdmatrixConfigs)
    register_load_executor(nv::atom_name(cfg), [cfg](const LoadAtomDesc&, std::string& why) -> std::unique_ptr<LoadExecutor> {
      try {
        return std::make_unique<LdmatrixExecutor>(cfg);
      } catch (const std::exception& e) {
        why = e.what();
        return nullptr;
      }
    });
}

}  // namespace flashprobe::probes
