// backward_draws: the problems of test_backward_gpu's random test, drawn again on the CPU from its
// records and counted per kernel and dtype (no GPU, no kernel run). For each backward-random.json
// (schema flashprobe.backward_gpu/1, test "random") it repeats the record's draws from its seed with
// the test's own generator (tests/common/backward_random.h) and the kernels' supports() on the
// record's device, then compares the per-kernel counts with the record's own (its rows; in records
// before the per-dtype rows, the "<kernel>: R run, S skipped" of its note). The dtype counts are
// recomputed from the seeds, never measured: that each problem passed is the record's claim.
//
//   build/off/tests/kernels/backward_draws reports/data/<device>/<run>/soak/*/backward-random.json
//
// Prints one line per record and per kernel and dtype, then the totals. Exit 0 when every record's
// counts are drawn again, 1 when one differs (the draw is not the one that ran), 2 on bad usage.
#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "../common/backward_random.h"
#include "flashprobe/core/dtype.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/kernels/backward.h"

namespace fp = flashprobe;

namespace {

fp::DeviceInfo device_of(const nlohmann::json& rec, const std::string& path) {
  const nlohmann::json& d = rec.contains("device") ? rec["device"] : nlohmann::json();
  if (!d.is_object() || !d.contains("vendor") || !d.contains("arch"))
    throw fp::UsageError(path + ": the record names no device (vendor, arch): its draws depend on the device's supports()");
  fp::DeviceInfo dev;
  dev.name = d.value("name", "");
  dev.vendor = d.value("vendor", "");
  dev.arch = d.value("arch", "");
  dev.wave_size = d.value("wave_size", 0);
  dev.multiprocessors = d.value("multiprocessors", 0);
  dev.global_mem_bytes = d.value("global_mem_bytes", 0LL);
  dev.smem_per_block = d.value("smem_per_block", 0);
  dev.smem_per_block_optin = d.value("smem_per_block_optin", 0);
  dev.smem_per_multiprocessor = d.value("smem_per_multiprocessor", 0);
  return dev;
}

struct Counted {
  std::vector<std::string> kernels;               // in the order of the record
  std::map<std::string, std::pair<long, long>> n;  // kernel -> run, skipped (as the record says)
};

// The kernels and their counts as the record states them.
Counted record_counts(const nlohmann::json& rec, const std::string& path) {
  Counted c;
  for (const auto& row : rec.value("rows", nlohmann::json::array())) {
    if (row.contains("kernel")) {  // one row per kernel and dtype
      const std::string k = row["kernel"];
      if (!c.n.count(k)) c.kernels.push_back(k);
      c.n[k].first += row.value("run", 0L);
      c.n[k].second += row.value("skipped", 0L);
      continue;
    }
    // One row for every kernel: subject "a, b, ...", note "...; a: R run, S skipped; b: ..."
    const std::string subject = row.value("subject", ""), note = row.value("note", "");
    for (std::size_t i = 0; i < subject.size();) {
      const std::size_t j = std::min(subject.find(", ", i), subject.size());
      c.kernels.push_back(subject.substr(i, j - i));
      i = j + 2;
    }
    static const std::regex said(R"(([A-Za-z0-9_]+): (\d+) run, (\d+) skipped)");
    for (std::sregex_iterator m(note.begin(), note.end(), said), end; m != end; ++m)
      c.n[(*m)[1].str()] = {std::stol((*m)[2].str()), std::stol((*m)[3].str())};
  }
  if (c.kernels.empty()) throw fp::UsageError(path + ": no rows naming the kernels");
  for (const std::string& k : c.kernels)
    if (!c.n.count(k)) throw fp::UsageError(path + ": no run/skipped count of " + k);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: backward_draws RECORD.json...  (backward-random.json of test_backward_gpu)\n";
    return 2;
  }
  // kernel -> dtype -> run, skipped; summed over the records
  std::map<std::string, std::map<std::string, std::pair<long, long>>> total;
  bool all_agree = true;
  try {
    for (int a = 1; a < argc; ++a) {
      const std::string path = argv[a];
      const nlohmann::json rec = fp::read_json_file(path);
      if (rec.value("schema", "") != "flashprobe.backward_gpu/1" || rec.value("test", "") != "random")
        throw fp::UsageError(path + ": not a random-problem record of test_backward_gpu (schema flashprobe.backward_gpu/1, test random)");
      const fp::DeviceInfo dev = device_of(rec, path);
      const Counted said = record_counts(rec, path);
      std::vector<const fp::kernels::BackwardKernelInfo*> ks;
      for (const std::string& name : said.kernels) {
        const auto* k = fp::kernels::find_backward_kernel(name);
        if (!k) throw fp::UsageError(path + ": no backward kernel " + name + " (have: " + fp::kernels::backward_kernel_names() + ")");
        ks.push_back(k);
      }
      const long cases = rec.value("cases", -1L);
      const std::uint64_t seed = rec.value("seed", std::uint64_t{0});
      if (cases < 0 || !rec.contains("seed")) throw fp::UsageError(path + ": the record has no cases or seed");
      std::mt19937_64 rng(seed);
      std::map<std::string, std::map<std::string, std::pair<long, long>>> n;
      for (long c = 0; c < cases; ++c) {
        const fp::testing::BackwardDraw d = fp::testing::next_backward_draw(rng, dev, ks.size() == 1 ? ks[0] : nullptr);
        const std::string dt(fp::dtype_name(d.p.dtype));
        for (const auto* k : ks) {
          auto& x = n[k->name][dt];
          ++(k->supports(dev, d.p) ? x.first : x.second);
        }
      }
      bool agree = true;
      for (const auto* k : ks) {
        long run = 0, skipped = 0;
        for (const auto& [dt, x] : n[k->name]) run += x.first, skipped += x.second;
        agree = agree && said.n.at(k->name) == std::make_pair(run, skipped);
      }
      all_agree = all_agree && agree;
      std::cout << path << ": seed " << seed << ", " << cases << " problems on " << dev.name << " (" << dev.arch << "): "
                << (agree ? "the record's counts drawn again" : "DIFFERS from the record's counts") << "\n";
      for (const auto* k : ks)
        for (const auto& [dt, x] : n[k->name]) {
          std::cout << "  " << k->name << " " << dt << ": " << x.first << " run, " << x.second << " skipped"
                    << (agree ? "" : " (record: " + std::to_string(said.n.at(k->name).first) + " run in all dtypes)") << "\n";
          total[k->name][dt].first += x.first;
          total[k->name][dt].second += x.second;
        }
    }
  } catch (const fp::UsageError& e) {
    std::cerr << "backward_draws: " << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "backward_draws: a record field has the wrong type: " << e.what() << "\n";
    return 2;
  }
  std::cout << "total over " << argc - 1 << " record(s), per kernel and dtype (recomputed from the seeds):\n";
  for (const auto& [k, per] : total)
    for (const auto& [dt, x] : per) std::cout << "  " << k << " " << dt << ": " << x.first << " run, " << x.second << " skipped\n";
  if (!all_agree) std::cerr << "backward_draws: some record's counts were not drawn again: its dtype counts are not known\n";
  return all_agree ? 0 : 1;
}
