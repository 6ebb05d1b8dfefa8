#!/usr/bin/python3
"""Performance from bench records (reports/fpreport/perf.py, figures.py): ratios only within one
run, "best" and figures only from runs that timed the dispatcher's kernel, variants never in the
summary, rounds of one run reduced to their median."""
import os, tempfile, unittest

import fixtures  # noqa: F401  (puts reports/ on the path)
from fpreport import figures, perf, records

CASE = "prefill:b2_hq16_hkv16_sq{s}_sk{s}_d128_f16"


def result(impl, kernel, s, ms, **kw):
    c = CASE.format(s=s)
    return {"impl": impl, "kernel": kernel, "group": "prefill", "case": c, "median_ms": ms,
            "flops": 4.0 * 2 * 16 * s * s * 128, "bytes": 1e6} | kw


def bench(run, date, results, commit="abc1234"):
    return records.Record("bench", {"schema": "flashprobe.bench/1", "date": date, "commit": commit, "timing": "graph",
                                    "device": {"name": "H100"}, "ceilings": {"bf16_gemm_tflops": 700.0},
                                    "results": results}, f"h100/{run}/bench.json", "/")


def run_a():  # an older full run: mma and wgmma beside flash and cuDNN
    return [bench("2026-11-24-a", "2026-11-24T10:00:00Z",
                  [result("flashprobe", "mma", s, 2.0) for s in (2048, 4096)]
                  + [result("flashprobe", "wgmma", s, 1.0) for s in (2048, 4096)]
                  + [result("torch-flash", "flash", s, 1.5) for s in (2048, 4096)]
                  + [result("torch-cudnn", "cudnn", s, 0.8) for s in (2048, 4096)])]


def run_b():  # a newer partial run: mma only (and a variant), two rounds of flash
    return [bench("2026-11-24-b", "2026-11-24T20:00:00Z",
                  [result("flashprobe", "mma", s, 1.0) for s in (2048, 4096)]
                  + [result("flashprobe", "mma-baseline", s, 3.0) for s in (2048, 4096)]
                  + [result("torch-flash", "flash", s, 1.2) for s in (2048, 4096)]
                  + [result("torch-flash", "flash", s, 1.8) for s in (2048, 4096)]
                  + [result("torch-flash", "flash", s, 1.4) for s in (2048, 4096)])]


class Ratios(unittest.TestCase):
    def test_runs_and_variants(self):
        [a, b] = perf.bench_runs(run_a() + run_b())
        self.assertEqual((a.shipped, b.shipped, b.variants), ({"mma", "wgmma"}, {"mma"}, {"mma-baseline"}))
        self.assertEqual(b.times[("flash", CASE.format(s=2048))], 1.4)  # the median of three rounds
        self.assertEqual(b.rounds[("flash", CASE.format(s=2048))], 3)

    def test_a_variant_by_name_is_never_a_shipped_kernel(self):
        # flashprobe bench --kernel wgmma/carry=on records the variant under that name (vs-cudnn of
        # 2026-11-27): read as shipped, it took a column of the summary's performance table.
        [r] = perf.bench_runs([bench("2026-11-27-v", "2026-11-27T10:00:00Z",
                                     [result("flashprobe", k, 2048, 1.0) for k in ("wgmma", "wgmma/carry=on", "decode/splits=4")]
                                     + [result("torch-cudnn", "cudnn", 2048, 0.8)])])
        self.assertEqual((r.shipped, r.variants), ({"wgmma"}, {"wgmma/carry=on", "decode/splits=4"}))

    def test_best_from_the_complete_run_each_kernel_from_its_newest(self):
        runs = perf.bench_runs(run_a() + run_b())
        t = perf.ratio_table(runs, "h100")
        g = "prefill D128"
        self.assertTrue(perf.complete_for(runs[0], g, runs))
        self.assertFalse(perf.complete_for(runs[1], g, runs))  # wgmma missing: not the dispatched kernel
        self.assertAlmostEqual(t.cells[(g, "best", "flash")].gmean, 1.5)   # wgmma in run a
        self.assertEqual(t.cells[(g, "best", "flash")].run.run, "h100/2026-11-24-a")
        self.assertAlmostEqual(t.cells[(g, "mma", "flash")].gmean, 1.4)    # run b: 1.4 / 1.0
        self.assertAlmostEqual(t.cells[(g, "wgmma", "cudnn")].gmean, 0.8)
        self.assertNotIn((g, "mma", "cudnn"), {k for k, v in t.cells.items() if v.run.run.endswith("-b")})
        self.assertAlmostEqual(t.cells[(g, "mma", "cudnn")].gmean, 0.4)    # from run a, where cuDNN ran
        self.assertNotIn("mma-baseline", t.columns)

    def test_no_ratio_across_runs(self):
        only_fp = bench("2026-11-24-c", "2026-11-24T21:00:00Z", [result("flashprobe", "mma", 2048, 1.0)])
        only_torch = bench("2026-11-24-d", "2026-11-24T21:05:00Z", [result("torch-flash", "flash", 2048, 1.0)])
        t = perf.ratio_table(perf.bench_runs([only_fp, only_torch]), "h100")
        self.assertEqual(t.cells, {})

    def test_dispatched_field_decides_completeness(self):
        rs = [result("flashprobe", "mma", s, 1.0, dispatched="wgmma") for s in (2048, 4096)]
        rs += [result("torch-flash", "flash", s, 1.0) for s in (2048, 4096)]
        runs = perf.bench_runs([bench("2026-11-24-e", "2026-11-24T22:00:00Z", rs)])
        self.assertFalse(perf.complete_for(runs[0], "prefill D128", runs))
        rs += [result("flashprobe", "wgmma", s, 0.5, dispatched="wgmma") for s in (2048, 4096)]
        runs = perf.bench_runs([bench("2026-11-24-e", "2026-11-24T22:00:00Z", rs)])
        self.assertTrue(perf.complete_for(runs[0], "prefill D128", runs))
        t = perf.ratio_table(runs, "h100")
        self.assertAlmostEqual(perf.ratios(runs[0], "prefill D128", "dispatched", "flash").gmean, 2.0)
        self.assertAlmostEqual(t.cells[("prefill D128", "best", "flash")].gmean, 2.0)

    def test_case_groups(self):
        self.assertEqual(perf.group_of(perf.parse_case("prefill:b2_hq16_hkv16_sq8192_sk8192_d64_bf16_causal")),
                         "prefill D64 causal")
        self.assertEqual(perf.group_of(perf.parse_case("whisper:b4_hq16_hkv16_sq1500_sk1500_d64_f16")), "Whisper")
        self.assertEqual(perf.group_of(perf.parse_case("decode:b8_hq32_hkv32_sq1_sk8192_d128_bf16")), "decode")
        self.assertIsNone(perf.group_of(perf.parse_case("custom:b8_hq16_hkv16_sq2048_sk2048_d128_f16")))
        self.assertIsNone(perf.parse_case("not a case"))


class Figures(unittest.TestCase):
    def test_one_run_per_figure_and_only_complete_runs(self):
        runs = perf.bench_runs(run_a() + run_b())
        with tempfile.TemporaryDirectory() as d:
            figs, not_drawn = figures.perf_figures(runs, d, lambda r: f"record: {r.run}")
            self.assertEqual([f[2] for f in figs], ["record: h100/2026-11-24-a"])
            self.assertTrue(all(os.path.getsize(os.path.join(d, f[0])) > 1000 for f in figs))
            self.assertEqual([(r.run, g) for r, g in not_drawn], [("h100/2026-11-24-b", "prefill D128")])


if __name__ == "__main__":
    unittest.main()
