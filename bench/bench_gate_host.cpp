// The property gate's host work per case (Google Benchmark), phase by phase, on the cases the gate
// draws: AgreesWithOracle's domain for one kernel family (gate/include/flashprobe/gate/kernel_domain.h, on a
// fabricated H100 so that no device is needed), sizes ramped 0..100 as RapidCheck ramps them.
//
// Draw: generate_case (the problem, seed and input kind). Inputs: Case::make_inputs (every element of
// Q, K and V on the host). Oracle: oracle::check of an output that passes (the emulation's, rounded).
// InputsCompare: the runner's "inputs unchanged" scan (a memcmp of every input byte after the
// download). Each reports cases/s; together they are the host's share of the ledger's `time` line.
//
//   bench_gate_host [--benchmark_filter=Inputs] ; FLASHPROBE_ORACLE_THREADS=1 for one core
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "flashprobe/core/half.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/reference.h"
#include "flashprobe/proptests/cases.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/gate/stand_in_device.h"

using namespace flashprobe;
using namespace flashprobe::proptests;
using flashprobe::gate::kernel_domain;
using flashprobe::gate::kSampledRows;
using flashprobe::gate::kSampledRowsFromKeys;
using flashprobe::gate::probe_problem;
using flashprobe::gate::stand_in_h100;

namespace {

constexpr int kCases = 200;

// The gate's domain of a kernel family; the kernel's predicate is dropped where this build refuses
// the fabricated device (an off build carries no device code).
Domain domain_of(const char* kernel) {
  const kernels::KernelInfo* k = kernels::find_kernel(kernel);
  Domain d = kernel_domain(*k, stand_in_h100());
  if (!k->supports(stand_in_h100(), probe_problem(d))) d.supports = nullptr;
  return d;
}

const std::vector<Case>& cases_of(const char* kernel) {
  static std::vector<Case> cs = [&] {
    const Domain d = domain_of(kernel);
    std::vector<Case> v;
    for (int i = 0; i < kCases; ++i) v.push_back(generate_case(d, 77 + static_cast<std::uint64_t>(i), i * 100 / (kCases - 1)));
    return v;
  }();
  return cs;
}

struct Prepared {
  std::vector<AttnInputs> in;
  std::vector<AttnOutputs> out;
};

const Prepared& prepared() {
  static Prepared p = [] {
    Prepared r;
    for (const Case& c : cases_of("tiled")) {
      r.in.push_back(c.make_inputs());
      const oracle::Reference emu = oracle::emulate_low_precision(c.problem, r.in.back());
      AttnOutputs o{Tensor(c.problem.out_dtype, c.problem.o_span()), {}};
      const Strides os = c.problem.o_strides();
      for (int b = 0; b < c.problem.batch; ++b)
        for (int i = 0; i < c.problem.sq; ++i)
          for (int h = 0; h < c.problem.hq; ++h)
            for (int x = 0; x < c.problem.dv; ++x)
              o.o.set(offset(os, b, i, h, x), emu.o[emu.o_index(c.problem, b, i, h, x)]);
      o.lse.assign(emu.lse.begin(), emu.lse.end());
      r.out.push_back(std::move(o));
    }
    return r;
  }();
  return p;
}

void Draw(benchmark::State& st) {
  const Domain d = domain_of("tiled");
  std::uint64_t i = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(generate_case(d, 77 + i % kCases, static_cast<int>(i % kCases) * 100 / (kCases - 1)));
    ++i;
  }
  st.counters["cases/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

void Inputs(benchmark::State& st) {
  const auto& cs = cases_of("tiled");
  std::size_t i = 0;
  double elements = 0;
  for (auto _ : st) {
    const AttnInputs in = cs[i++ % cs.size()].make_inputs();
    elements += static_cast<double>(in.q.size() + in.k.size() + in.v.size());
    benchmark::DoNotOptimize(in.q.bytes.data());
  }
  st.counters["cases/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  st.counters["elements/s"] = benchmark::Counter(elements, benchmark::Counter::kIsRate);
}

void Oracle(benchmark::State& st) {
  const auto& cs = cases_of("tiled");
  const Prepared& p = prepared();
  std::size_t i = 0, fails = 0;
  for (auto _ : st) {
    const std::size_t n = i++ % cs.size();
    oracle::CheckOptions o;
    if (cs[n].problem.sk >= kSampledRowsFromKeys) {
      o.max_rows = kSampledRows;
      o.seed = static_cast<std::uint64_t>(cs[n].problem.sk);
    }
    fails += oracle::check(cs[n].problem, p.in[n], p.out[n], o).pass ? 0 : 1;
  }
  st.counters["cases/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  st.counters["failed"] = static_cast<double>(fails);
}

// The oracle's parts on the same cases (each a share of Oracle): the double reference, the
// low-precision emulation, and judge() (compare and the per-element bounds) on outputs computed once.
oracle::CheckOptions options_of(const Case& c) {
  oracle::CheckOptions o;
  if (c.problem.sk >= kSampledRowsFromKeys) {
    o.max_rows = kSampledRows;
    o.seed = static_cast<std::uint64_t>(c.problem.sk);
  }
  return o;
}

template <bool kEmulate>
void OracleRef(benchmark::State& st) {
  const auto& cs = cases_of("tiled");
  const Prepared& p = prepared();
  std::size_t i = 0;
  for (auto _ : st) {
    const std::size_t n = i++ % cs.size();
    const std::vector<int> rows = oracle::rows_to_check(cs[n].problem, p.in[n], options_of(cs[n]));
    const oracle::Reference r = kEmulate ? oracle::emulate_low_precision_rows(cs[n].problem, p.in[n], rows)
                                         : oracle::reference_rows(cs[n].problem, p.in[n], rows);
    benchmark::DoNotOptimize(r.o.data());
  }
  st.counters["cases/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

void OracleJudge(benchmark::State& st) {
  const auto& cs = cases_of("tiled");
  const Prepared& p = prepared();
  struct Parts {
    oracle::Reference ref, emu, got;
    double v_max;
  };
  static const std::vector<Parts> parts = [&] {
    std::vector<Parts> v;
    for (std::size_t n = 0; n < cs.size(); ++n) {
      const std::vector<int> rows = oracle::rows_to_check(cs[n].problem, p.in[n], options_of(cs[n]));
      v.push_back({oracle::reference_rows(cs[n].problem, p.in[n], rows),
                   oracle::emulate_low_precision_rows(cs[n].problem, p.in[n], rows),
                   oracle::gather_output(cs[n].problem, p.out[n], rows), oracle::finite_v_max(cs[n].problem, p.in[n])});
    }
    return v;
  }();
  std::size_t i = 0;
  double elements = 0;
  for (auto _ : st) {
    const std::size_t n = i++ % cs.size();
    const Parts& q = parts[n];
    benchmark::DoNotOptimize(oracle::judge(cs[n].problem, q.ref, q.emu, q.got, q.v_max, options_of(cs[n])).pass);
    elements += static_cast<double>(q.ref.o.size());
  }
  st.counters["cases/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  st.counters["elements/s"] = benchmark::Counter(elements, benchmark::Counter::kIsRate);
}

void InputsCompare(benchmark::State& st) {
  const Prepared& p = prepared();
  std::vector<AttnInputs> copies = p.in;
  std::size_t i = 0;
  for (auto _ : st) {
    const std::size_t n = i++ % copies.size();
    for (auto [a, b] : {std::pair{&p.in[n].q, &copies[n].q}, {&p.in[n].k, &copies[n].k}, {&p.in[n].v, &copies[n].v}})
      benchmark::DoNotOptimize(std::memcmp(a->bytes.data(), b->bytes.data(), a->bytes.size()));
  }
  st.counters["cases/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(Draw)->Unit(benchmark::kMicrosecond);
BENCHMARK(Inputs)->Unit(benchmark::kMicrosecond);
BENCHMARK(Oracle)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(OracleRef, false)->Name("Oracle/reference")->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(OracleRef, true)->Name("Oracle/emulation")->Unit(benchmark::kMicrosecond);
BENCHMARK(OracleJudge)->Name("Oracle/judge")->Unit(benchmark::kMicrosecond);
BENCHMARK(InputsCompare)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
