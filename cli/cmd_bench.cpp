// flashprobe bench: times every kernel over the benchmark grid (bench/bench_grid.h) with device
// events after warm-up, the median of many repetitions and rotated inputs, and writes records
// (TFLOP/s, GB/s) plus the device-to-device copy ceiling measured in the same run.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench/bench_backward.h"
#include "bench/bench_grid.h"
#include "bench/bench_order.h"
#include "bench/gemm_ceiling.h"
#include "bench/random_tiled.h"
#include "bench/timer.h"
#include "command.h"
#include "flashprobe/core/buffer.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/kernels/select.h"
#include "flashprobe/kernels/variants.h"

namespace flashprobe::cli {
namespace {

struct Opts {
  std::string json = "bench.json";
  std::vector<std::string> kernels;
  std::vector<std::string> groups;
  std::vector<std::string> dtypes;
  std::vector<std::string> problems;
  std::string timing = "graph";
  std::string order = "balanced";  // bench_order.h
  bool quick = false;
  bool backward = false;
  double min_seconds = 0.25;
  int max_head_dim = 0;  // 0: every case; else only cases with d, dv <= it
};

// Input sets on the device, enough of them that one pass over all exceeds the L2 several times.
struct InputSets {
  std::vector<DeviceBuffer> q, k, v;
  DeviceBuffer o, lse, ws;
  kernels::MaskInputs masks;
  int count = 1;
};

InputSets make_inputs(const AttnProblem& p, std::size_t ws_bytes, long long l2_bytes) {
  InputSets s;
  const double set_bytes = double(p.q_span() + p.k_span() + p.v_span()) * double(dtype_size(p.dtype));
  s.count = static_cast<int>(std::min(8.0, std::max(1.0, std::ceil(3.0 * double(l2_bytes) / set_bytes))));
  // One random (never zero) set uploaded into every rotation buffer: the buffers' distinct
  // addresses are what defeat the L2.
  const auto q = bench::random_tiled(p.dtype, p.q_span(), 1000), k = bench::random_tiled(p.dtype, p.k_span(), 1001),
             v = bench::random_tiled(p.dtype, p.v_span(), 1002);
  for (int i = 0; i < s.count; ++i) {
    s.q.emplace_back(q.size());
    s.q.back().upload(q);
    s.k.emplace_back(k.size());
    s.k.back().upload(k);
    s.v.emplace_back(v.size());
    s.v.back().upload(v);
  }
  s.o = DeviceBuffer(static_cast<std::size_t>(p.o_span()) * dtype_size(p.out_dtype));
  s.lse = DeviceBuffer(static_cast<std::size_t>(p.lse_size()) * sizeof(float));
  s.ws = DeviceBuffer(std::max<std::size_t>(ws_bytes, 16));
  s.masks = kernels::upload_mask_inputs(p);
  return s;
}

// The kernels to time: every production kernel, or the ones named (production kernels and variants,
// variants.h, in the order given).
std::vector<kernels::KernelInfo> kernels_to_time(const Opts& o) {
  if (o.kernels.empty()) return kernels::kernels();
  std::vector<kernels::KernelInfo> v;
  for (const auto& name : o.kernels) v.push_back(kernels::kernel_or_variant(name));
  return v;
}

// One timing: its printed line, and its record row with TFLOP/s and GB/s from the given model.
nlohmann::json timing_row(const Opts& o, const std::string& kernel, const bench::BenchCase& c, const bench::Timing& t,
                          int sets, double flops, double bytes, const std::string& dispatched) {
  const double tflops = flops / (t.median_ms * 1e-3) / 1e12, gbps = bytes / (t.median_ms * 1e-3) / 1e9;
  std::printf("%-14s %-48s %10.4f %10.1f %9.0f\n", kernel.c_str(), c.id().substr(0, 48).c_str(), t.median_ms, tflops, gbps);
  std::fflush(stdout);
  return {{"impl", "flashprobe"}, {"kernel", kernel}, {"group", c.group}, {"case", c.id()}, {"problem", c.p},
          {"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms}, {"reps", t.reps}, {"timing", o.timing},
          {"launch_host_us", t.launch_host_us}, {"input_sets", sets}, {"flops", flops}, {"bytes", bytes},
          {"tflops", tflops}, {"gbps", gbps}, {"dispatched", dispatched}};
}

// How the kernels of each case were ordered (bench_order.h), for the record.
nlohmann::json order_json(const Opts& o, std::size_t kernels) {
  const bench::KernelOrder ko = bench::parse_kernel_order(o.order);
  return {{"mode", bench::kernel_order_name(ko)}, {"kernels", kernels},
          {"period", ko == bench::KernelOrder::given ? 1 : bench::kernel_order_period(static_cast<int>(kernels))}};
}

// Rewritten after every timing, so a run cut short by a time limit still leaves its records.
void write_results(const Opts& o, nlohmann::json& rec, const nlohmann::json& results, bool complete) {
  rec["results"] = results;
  rec["complete"] = complete;
  write_json_file(o.json, rec);
  if (complete) std::printf("wrote %zu timing(s) to %s\n", results.size(), o.json.c_str());
}

// The backward kernels to time: all of them, or the ones named (an unknown name lists them).
std::vector<const kernels::BackwardKernelInfo*> backward_to_time(const Opts& o) {
  std::vector<const kernels::BackwardKernelInfo*> v;
  if (o.kernels.empty())
    for (const auto& k : kernels::backward_kernels()) v.push_back(&k);
  for (const auto& name : o.kernels) {
    const kernels::BackwardKernelInfo* k = kernels::find_backward_kernel(name);
    if (!k) throw UsageError("--kernel " + name + " with --backward: no such backward kernel (have: " +
                             kernels::backward_kernel_names() + ")");
    v.push_back(k);
  }
  return v;
}

bool wanted(const Opts& o, const bench::BenchCase& c) {
  if (!o.groups.empty() && std::find(o.groups.begin(), o.groups.end(), c.group) == o.groups.end()) return false;
  if (o.max_head_dim > 0 && std::max(c.p.d, c.p.dv) > o.max_head_dim) return false;
  return o.dtypes.empty() || std::find(o.dtypes.begin(), o.dtypes.end(), dtype_name(c.p.dtype)) != o.dtypes.end();
}

// The backward kernels over the grid's prefill and Whisper cases (decode has no backward) or the
// custom problems: same timing, records with pass "backward" and 2.5x the forward's FLOPs.
int run_backward(const Opts& o, const std::vector<const kernels::BackwardKernelInfo*>& timed,
                 const std::vector<bench::BenchCase>& cases) {
  const DeviceInfo dev = require_device();
  nlohmann::json rec = record_header("bench");
  rec["evidence"] = "measured";
  rec["pass"] = "backward";
  rec["timing"] = o.timing;
  rec["order"] = order_json(o, timed.size());
  rec["filters"] = {{"kernels", o.kernels}, {"groups", o.groups}, {"dtypes", o.dtypes}, {"quick", o.quick},
                    {"problems", o.problems}, {"backward", true}};
  rec["method"] = std::string(o.timing == "graph" ? "graph replays between device events" : "device events around each launch call") +
                  "; one input set (Q, K, V, dO random; O and LSE from the dispatched forward kernel); 3 warm-ups; "
                  "median of >= 10 repetitions and >= " + std::to_string(o.min_seconds) +
                  " s; FLOPs = 2.5 x the forward's (FlashAttention's backward convention)";
  std::printf("device %s (%s), backward kernels\n", dev.name.c_str(), dev.arch.c_str());
  std::printf("%-14s %-48s %10s %10s %9s\n", "kernel", "case", "median ms", "TFLOP/s", "GB/s");
  nlohmann::json results = nlohmann::json::array();
  const bench::KernelOrder order = bench::parse_kernel_order(o.order);
  long long case_index = 0;
  for (const auto& c : cases) {
    if (c.group == "decode" || !wanted(o, c)) continue;
    const kernels::BackwardSelection chosen = kernels::select_backward(dev, c.p, false);
    const std::string dispatched = chosen ? chosen.kernel->name : std::string();
    int position = 0;
    for (const int ki : bench::kernel_order(static_cast<int>(timed.size()), case_index++, order)) {
      const kernels::BackwardKernelInfo* k = timed[static_cast<std::size_t>(ki)];
      if (!k->supports(dev, c.p)) continue;
      const bench::BackwardTiming bt = bench::time_backward(*k, c, o.timing, o.min_seconds);
      nlohmann::json row = timing_row(o, k->name, c, bt.t, 1, c.backward_flops(), c.backward_bytes(), dispatched);
      row["pass"] = "backward";
      row["forward_by"] = bt.forward_by;
      row["order_position"] = position++;
      results.push_back(std::move(row));
      write_results(o, rec, results, false);
    }
  }
  write_results(o, rec, results, true);
  return 0;
}

// Kernel k on input set i of `in` (the tensors of one rotation slot), on stream s.
void launch_on(const kernels::KernelInfo& k, const bench::BenchCase& c, InputSets& in, int i, kernels::Stream s) {
  kernels::DeviceTensors dt{in.q[static_cast<std::size_t>(i)].data(), in.k[static_cast<std::size_t>(i)].data(),
                            in.v[static_cast<std::size_t>(i)].data(), in.o.data(), in.lse.as<float>(),
                            in.masks.alibi.as<const float>(), in.masks.seqlens.as<const int>()};
  k.launch(c.p, dt, in.ws.data(), s);
}

// Whether bench times k on c: supported there, and ref3pass only where its score matrix stays under 8 GB.
bool timed_here(const kernels::KernelInfo& k, const DeviceInfo& dev, const bench::BenchCase& c) {
  if (!k.supports(dev, c.p)) return false;
  return k.name != "ref3pass" || double(c.p.batch) * c.p.hq * c.p.sq * double(c.p.sk) * 4 <= 8e9;
}

// Plan fields of a timing row: the shipped decode's split count as planned here (decode_plan.h), beside
// forced counts timed as decode/splits=<n> variants (scripts/gpu/decode_splits_table.py); decode/fused=on's
// split count and the splits each block walks at this batch.
void add_plan_fields(nlohmann::json& row, const kernels::KernelInfo& k, const bench::BenchCase& c) {
  if (k.name == "decode") row["planned_splits"] = kernels::decode_default_splits(c.p);
  if (k.name == "decode/fused=on") {
    const int n = kernels::decode_default_fused_splits(c.p);
    row["planned_splits"] = n;
    row["planned_walk"] = kernels::decode_default_walk(c.p, n);
  }
}

int run(const Opts& o, const std::vector<kernels::KernelInfo>& timed, const std::vector<bench::BenchCase>& cases) {
  const DeviceInfo dev = require_device();
  nlohmann::json rec = record_header("bench");
  rec["evidence"] = "measured";
  rec["timing"] = o.timing;
  rec["order"] = order_json(o, timed.size());
  // What was asked, so that a reader can tell a partial run from the whole grid.
  rec["filters"] = {{"kernels", o.kernels}, {"groups", o.groups}, {"dtypes", o.dtypes}, {"quick", o.quick},
                    {"problems", o.problems}, {"max_head_dim", o.max_head_dim}};
  rec["method"] =
      (o.timing == "graph"
           ? std::string("one graph launching the kernel once per input set, replayed between device events (host "
                         "work happens at capture, outside the timed region), per-launch time = replay / sets")
           : std::string("device events around each launch call (the host's launch path included)")) +
      "; 3 warm-ups; median of >= 10 repetitions and >= " + std::to_string(o.min_seconds) +
      " s; inputs rotated over enough sets to exceed 3x L2; kernels of a case in the " + o.order +
      " order (bench_order.h; order_position per timing unless interleaved)";
  const double copy = bench::copy_ceiling_gbps();
  rec["ceilings"] = {{"d2d_copy_gbps", copy}};
  const bench::GemmCeiling gemm = bench::gemm_ceiling_tflops();
  if (gemm.tflops) {
    rec["ceilings"]["bf16_gemm_tflops"] = *gemm.tflops;
    rec["ceilings"]["bf16_gemm_by"] = gemm.library + " cublasGemmEx 8192^3, f32 accumulation";
  } else {
    rec["ceilings"]["bf16_gemm_unavailable"] = gemm.why_not;
  }
  std::printf("device %s (%s), copy ceiling %.0f GB/s, bf16 GEMM ceiling %s\n", dev.name.c_str(), dev.arch.c_str(), copy,
              gemm.tflops ? (std::to_string(static_cast<int>(*gemm.tflops)) + " TFLOP/s").c_str() : gemm.why_not.c_str());
  long long l2 = 50ll << 20;  // H100: 50 MB; used only to size the input rotation
  nlohmann::json results = nlohmann::json::array();
  std::printf("%-14s %-48s %10s %10s %9s\n", "kernel", "case", "median ms", "TFLOP/s", "GB/s");
  const bench::KernelOrder order = bench::parse_kernel_order(o.order);
  long long case_index = 0;
  for (const auto& c : cases) {
    if (!wanted(o, c)) continue;
    // The kernel a user gets for this problem here: the report draws a run's figure only when the
    // run timed it.
    const kernels::Selection chosen = kernels::select(dev, c.p);
    const std::string dispatched = chosen ? chosen.kernel->name : std::string();
    if (order == bench::KernelOrder::interleaved) {  // every kernel of the case in rounds (bench_order.h)
      ++case_index;
      std::vector<const kernels::KernelInfo*> ks;
      std::size_t ws = 0;
      for (const auto& k : timed)
        if (timed_here(k, dev, c)) {
          ks.push_back(&k);
          ws = std::max(ws, k.workspace_bytes(c.p));
        }
      if (ks.empty()) continue;
      InputSets in = make_inputs(c.p, ws, l2);
      std::vector<std::function<void(int, kernels::Stream)>> launches;
      for (const kernels::KernelInfo* k : ks)
        launches.push_back([k, &c, &in](int i, kernels::Stream s) { launch_on(*k, c, in, i, s); });
      const std::vector<bench::Timing> ts = bench::time_graphs_interleaved(launches, in.count, 3, 10, 200, o.min_seconds);
      for (std::size_t j = 0; j < ks.size(); ++j) {
        results.push_back(timing_row(o, ks[j]->name, c, ts[j], in.count, c.flops(), c.bytes(), dispatched));
        add_plan_fields(results.back(), *ks[j], c);
      }
      write_results(o, rec, results, false);
      continue;
    }
    std::optional<InputSets> in_cache;  // shared by the kernels of one case (same problem, no workspace growth)
    std::size_t ws_have = 0;
    int position = 0;
    for (const int ki : bench::kernel_order(static_cast<int>(timed.size()), case_index++, order)) {
      const kernels::KernelInfo& k = timed[static_cast<std::size_t>(ki)];
      if (!timed_here(k, dev, c)) continue;
      if (!in_cache || k.workspace_bytes(c.p) > ws_have) {
        ws_have = k.workspace_bytes(c.p);
        in_cache.emplace(make_inputs(c.p, ws_have, l2));
      }
      InputSets& in = *in_cache;
      const auto launch_set = [&](int i, kernels::Stream s) { launch_on(k, c, in, i, s); };
      const bench::Timing t =
          o.timing == "graph"
              ? bench::time_graph(launch_set, in.count, 3, 10, 200, o.min_seconds)
              : bench::time_device([&](int rep) { launch_set(rep % in.count, nullptr); }, 3, 10, 200, o.min_seconds);
      results.push_back(timing_row(o, k.name, c, t, in.count, c.flops(), c.bytes(), dispatched));
      results.back()["order_position"] = position++;
      add_plan_fields(results.back(), k, c);
      write_results(o, rec, results, false);
    }
  }
  // The head-dim metric (bench_grid.h): each tensor-core timing below its tile class against the class.
  const std::vector<bench::HeadDimRatio> ratios = bench::headdim_ratios(results);
  if (!ratios.empty()) {
    std::printf("\nhead dims below the tile class: TFLOP/s (real d/dv FLOPs) over the class's, target >= %.2f\n",
                bench::kHeadDimTarget);
    std::printf("%-10s %-5s %-7s %9s %9s %9s %9s %7s\n", "kernel", "dtype", "mask", "d/dv", "class", "TFLOP/s", "class's", "ratio");
    nlohmann::json jr = nlohmann::json::array();
    int below = 0;
    for (const auto& r : ratios) {
      const std::string dd = std::to_string(r.d) + "/" + std::to_string(r.dv);
      const std::string cc = std::to_string(r.class_d) + "/" + std::to_string(r.class_dv);
      std::printf("%-10s %-5s %-7s %9s %9s %9.1f %9.1f %7.3f%s\n", r.kernel.c_str(), r.dtype.c_str(),
                  r.causal ? "causal" : "none", dd.c_str(), cc.c_str(), r.tflops, r.class_tflops, r.ratio,
                  r.ok() ? "" : "  below");
      below += !r.ok();
      jr.push_back({{"kernel", r.kernel}, {"dtype", r.dtype}, {"causal", r.causal}, {"d", r.d}, {"dv", r.dv},
                    {"class_d", r.class_d}, {"class_dv", r.class_dv}, {"tflops", r.tflops}, {"class_tflops", r.class_tflops},
                    {"ratio", r.ratio}, {"ok", r.ok()}});
    }
    std::printf("%d of %zu below %.2f\n", below, ratios.size(), bench::kHeadDimTarget);
    rec["headdim_ratios"] = jr;
    rec["headdim_target"] = bench::kHeadDimTarget;
  }
  write_results(o, rec, results, true);
  return 0;
}

CommandRegistration reg("bench", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("bench", "Time every kernel over the benchmark grid (needs a GPU)");
  auto o = std::make_shared<Opts>();
  sub->add_option("--json", o->json, "Write the records here")->capture_default_str();
  sub->add_option("--kernel", o->kernels,
                  "Only these kernels, or variants of them for measurements (<kernel>/<option>=<value>, e.g. "
                  "wgmma/schedule=overlap; an unknown name lists them; the records name the variant) (repeatable)");
  sub->add_option("--group", o->groups,
                  "Only these groups: prefill, whisper, decode, headdim (every tensor-core head dim and d != dv; "
                  "timed only when named) (repeatable)")
      ->check(CLI::IsMember({"prefill", "whisper", "decode", "headdim"}));
  sub->add_option("--dtype", o->dtypes, "Only cases of these input types: f16, bf16 (repeatable)")
      ->check(CLI::IsMember({"f16", "bf16"}));
  sub->add_option("--timing", o->timing,
                  "graph: replays of a captured graph (kernel time, the default); launch: events around each launch "
                  "call (includes the host's launch path)")
      ->check(CLI::IsMember({"graph", "launch"}))
      ->capture_default_str();
  sub->add_option("--order", o->order,
                  "balanced: the kernels of each case in a row of a Williams design over them, so that over the "
                  "cases each is timed at each position equally often (a fixed order biased the later kernels); "
                  "interleaved: the kernels of a case timed one replay each per round, each round so ordered, until "
                  "each has its repetitions (all see the same drift of clocks over the case; --timing graph, forward "
                  "only); given: the --kernel order for every case")
      ->check(CLI::IsMember({"balanced", "interleaved", "given"}))
      ->capture_default_str();
  sub->add_flag("--quick", o->quick, "A reduced grid (smoke runs)");
  sub->add_flag("--backward", o->backward,
                "Time the backward kernels instead (flashprobe/kernels/backward.h; --kernel names them); decode "
                "cases are left out; TFLOP/s count 2.5x the forward's FLOPs");
  sub->add_option("--problem", o->problems,
                  "Time these problems instead of the grid (group custom): a problem JSON file, or a file holding an "
                  "array of them (repeatable)")
      ->check(CLI::ExistingFile);
  sub->add_option("--min-seconds", o->min_seconds, "Device time per measurement at least")->check(CLI::PositiveNumber);
  sub->add_option("--max-head-dim", o->max_head_dim,
                  "Only cases with d and dv at most this (for example the headdim group's small dims: 64)")
      ->check(CLI::Range(kernels::kHeadDimStep, 256));
  return [o] {
    if (o->order == "interleaved" && (o->timing != "graph" || o->backward))
      throw UsageError("--order interleaved: times graph replays of the forward kernels only (not with --timing " +
                       o->timing + (o->backward ? " or --backward)" : ")"));
    if (!o->problems.empty() && (o->quick || !o->groups.empty()))
      throw UsageError("--problem replaces the grid: it does not combine with --quick or --group");
    // The output, kernel names and problem files are checked before any device is touched.
    require_writable_file(o->json, "--json");
    if (o->backward) {
      const auto timed = backward_to_time(*o);
      return run_backward(*o, timed, o->problems.empty() ? bench::bench_grid(o->quick) : bench::custom_cases(o->problems));
    }
    const std::vector<kernels::KernelInfo> timed = kernels_to_time(*o);
    if (!o->problems.empty()) return run(*o, timed, bench::custom_cases(o->problems));
    std::vector<bench::BenchCase> cases = bench::bench_grid(o->quick);
    if (std::find(o->groups.begin(), o->groups.end(), "headdim") != o->groups.end())
      for (auto& c : bench::headdim_grid()) cases.push_back(std::move(c));
    return run(*o, timed, cases);
  };
});

}  // namespace
}  // namespace flashprobe::cli
