// Oracle throughput (Google Benchmark), against Eigen's own double GEMM measured in the same run.
//
// FullOracle: B=1, H=4, Sq=Sk=S, D=Dv=128, f16 inputs, no mask: 4*H*S^2*D flops (QK^T and PV).
// EigenGemm: C = A * B with A [S x D], B [D x S] in double, one independent product per thread so
// that it uses the same cores as the oracle: 2*S^2*D flops per thread. The ratio of the two
// "flops" rates (per CPU-second) is the oracle's efficiency (target >= 0.5 for S >= 1024).
// RowSampledCheck: check() of a B=1, H=16, S=16384, D=128 causal output on N sampled rows
// (reference + emulation of those rows, a NaN scan of every row).
//
//   bench_oracle --benchmark_out=oracle.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <random>
#include <thread>
#include <vector>

#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/reference.h"

using namespace flashprobe;

namespace {

int threads() {
  if (const char* e = std::getenv("FLASHPROBE_ORACLE_THREADS"); e && std::atoi(e) > 0) return std::atoi(e);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void FullOracle(benchmark::State& st) {
  AttnProblem p;
  p.hq = p.hkv = 4;
  p.sq = p.sk = static_cast<int>(st.range(0));
  p.d = p.dv = 128;
  const AttnInputs in = random_inputs(p, 1);
  for (auto _ : st) benchmark::DoNotOptimize(oracle::reference(p, in).o.data());
  st.counters["flops"] = benchmark::Counter(4.0 * p.hq * p.sq * p.sk * p.d, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = threads();
}

void EigenGemm(benchmark::State& st) {
  const int S = static_cast<int>(st.range(0)), D = 128, T = threads();
  std::vector<Eigen::MatrixXd> A(T, Eigen::MatrixXd::Random(S, D)), B(T, Eigen::MatrixXd::Random(D, S)), C(T);
  for (auto _ : st) {
    std::vector<std::thread> pool;
    for (int t = 1; t < T; ++t) pool.emplace_back([&, t] { C[t].noalias() = A[t] * B[t]; });
    C[0].noalias() = A[0] * B[0];
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(C[0].data());
  }
  st.counters["flops"] = benchmark::Counter(2.0 * S * S * D * T, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = T;
}

void RowSampledCheck(benchmark::State& st) {
  AttnProblem p;
  p.hq = p.hkv = 16;
  p.sq = p.sk = 16384;
  p.d = p.dv = 128;
  p.causal = Causal::bottom_right;
  static const AttnInputs in = random_inputs(p, 2);
  oracle::CheckOptions opt;
  opt.max_rows = static_cast<int>(st.range(0));
  // A plausible kernel output: the emulated reference on the rows the check will sample, finite
  // values elsewhere (only NaN/Inf are looked at there).
  AttnOutputs out{Tensor(p.out_dtype, p.o_span()), std::vector<float>(static_cast<std::size_t>(p.lse_size()), 0.f)};
  for (std::int64_t i = 0; i < out.o.size(); ++i) out.o.set(i, 0.01 * static_cast<double>(i % 7));
  const auto rows = oracle::rows_to_check(p, in, opt);
  const oracle::Reference e = oracle::emulate_low_precision_rows(p, in, rows);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int h = 0; h < p.hq; ++h) {
      for (int x = 0; x < p.dv; ++x)
        out.o.set(offset(p.o_strides(), 0, rows[r], h, x), e.o[e.o_index(p, 0, static_cast<int>(r), h, x)]);
      out.lse[static_cast<std::size_t>(h) * p.sq + rows[r]] = static_cast<float>(e.lse[e.lse_index(p, 0, h, static_cast<int>(r))]);
    }
  bool pass = false;
  for (auto _ : st) pass = oracle::check(p, in, out, opt).pass;
  st.counters["pass"] = pass;
  st.counters["rows"] = static_cast<double>(rows.size());
  st.counters["threads"] = threads();
}

}  // namespace

// Process CPU time (all threads): on a shared machine wall time measures the neighbours too, while
// flops per CPU-second compares the oracle with the GEMM fairly. The check's wall time on two idle
// cores is about its CPU time / 2 (it runs on two threads).
BENCHMARK(FullOracle)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK(EigenGemm)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK(RowSampledCheck)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->Iterations(3);
BENCHMARK_MAIN();
