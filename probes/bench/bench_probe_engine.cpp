// How long the engine takes to probe one simulated atom (the issue asks for "well under a second"
// for a 16x16x16 wave32 atom). Includes the simulation; a GPU executor replaces it with a few launches.
#include <benchmark/benchmark.h>

#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/simulated.h"

using namespace flashprobe::probes;

namespace {
void probe_atom(benchmark::State& state, const char* name, ReplicaRule rule) {
  const AtomDesc& atom = *find_mma_atom(name);
  SimulatedExecutor sim(atom, *atom.expected, rule);
  long experiments = 0;
  int calls = 0;
  for (auto _ : state) {
    ProbeResult r = probe(atom, sim);
    if (!r.ok()) state.SkipWithError("probe did not recover the layout");
    experiments = r.experiments;
    calls = r.executor_calls;
    benchmark::DoNotOptimize(r);
  }
  state.counters["experiments"] = static_cast<double>(experiments);
  state.counters["executor_calls"] = calls;
}
}  // namespace

BENCHMARK_CAPTURE(probe_atom, gfx11_wave32_replicated, "GFX11_WMMA_16x16x16_F32F16_W32", ReplicaRule::partial)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(probe_atom, gfx11_wave32_replicated_poison, "GFX11_WMMA_16x16x16_F32F16_W32", ReplicaRule::poison)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(probe_atom, gfx12_wave32, "GFX12_WMMA_16x16x16_F32F16_W32", ReplicaRule::partial)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(probe_atom, sm80_16x8x16, "SM80_16x8x16_F32F16F16F32_TN", ReplicaRule::partial)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(probe_atom, wgmma_64x256x16, "SM90_64x256x16_F32F16F16_RS", ReplicaRule::partial)
    ->Unit(benchmark::kMillisecond);
