#!/usr/bin/python3
"""The report's backward section (reports/fpreport/backward.py): from records shaped as
test_backward_gpu, torch_props.py (the sdpa-*-bwd subjects) and the bwd-bench stage write them, the
section shows each check's counts, every mutant with its shrunk case, PyTorch's backward by subject
with its version, and each kernel's speed as a ratio to PyTorch's flash backward of the same call;
a run before those records falls back to GoogleTest's per-test verdicts; a part with no records says
so. The shipped data builds a report with the section."""
import os, re, subprocess, tempfile, unittest

from fixtures import ROOT as root, DATA, read_text, write_json

from fpreport import backward, perf, records

DEV = {"name": "Test GPU", "arch": "sm_90"}


def header(kind, date="2026-11-26T00:00:00Z"):
    return {"schema": f"flashprobe.{kind}/1", "commit": "abc1234", "date": date, "device": DEV, "evidence": "measured"}


def row(check, subject, run, failed, note=""):
    return {"check": check, "subject": subject, "run": run, "skipped": 0, "failed": failed, "note": note}


def write_run(d):
    run = os.path.join(d, "test-gpu", "2026-11-26-bwd")
    write_json(os.path.join(run, "backward-grid.json"), header("backward_gpu") | {
        "test": "grid", "rows": [row("backward grid", "tiled_bwd", 72, 0, "f16, bf16, f32"),
                                 row("backward grid", "tiled_bwd_det", 72, 1)]})
    write_json(os.path.join(run, "backward-determinism.json"), header("backward_gpu") | {
        "test": "determinism", "repeats": 250, "bitwise_equal": True,
        "rows": [row("backward determinism", "tiled_bwd_det", 1, 0, "250 runs of b2_x bitwise equal")]})
    write_json(os.path.join(run, "backward-mutants.json"), header("backward_gpu") | {
        "test": "mutants", "mutants": [
            {"name": "bwd_dq_race", "killed": True, "case": "b1_hq2_hkv2_sq64_sk2048_d64_f16",
             "shrunk": "b1_hq1_hkv1_sq1_sk512_d8_f16", "shrunk_failure": "backward FAIL dQ"},
            {"name": "bwd_no_rowsum_d", "killed": False}]})
    write_json(os.path.join(run, "bench-backward.json"), header("bench") | {"pass": "backward", "results": [
        {"impl": "flashprobe", "kernel": "tiled_bwd", "case": "prefill:b8_d64_f16", "tflops": 50.0, "median_ms": 2.0},
        {"impl": "flashprobe", "kernel": "tiled_bwd", "case": "prefill:b8_d128_f16", "tflops": 30.0, "median_ms": 3.0}]})
    write_json(os.path.join(run, "bench-backward-torch.json"), header("bench") | {"pass": "backward", "torch": "2.9.0", "results": [
        {"impl": "torch-flash", "kernel": "flash", "case": "prefill:b8_d64_f16", "tflops": 200.0, "median_ms": 0.5},
        {"impl": "torch-cudnn", "kernel": "cudnn", "case": "prefill:b8_d64_f16", "tflops": 250.0, "median_ms": 0.4},
        {"impl": "torch-flash", "refused": "No available kernel", "case": "prefill:b8_d128_f16"}]})
    write_json(os.path.join(run, "torch-props", "torch_props.json"), {
        "schema": "flashprobe.torch_props/1", "date": "2026-11-26T00:00:00Z", "evidence": "measured",
        "environment": {"torch": "2.9.0"}, "runs": [
            {"subject": "sdpa-flash", "dtype": "f16", "checked": 1000, "failed": 0},
            {"subject": "sdpa-flash-bwd", "backward": True, "dtype": "bf16", "checked": 640, "refused": 12,
             "failed": 0, "worst_margin": 0.41, "stopped_by": "time budget"},
            {"subject": "sdpa-cudnn-bwd", "backward": True, "dtype": "f16", "checked": 37, "refused": 0, "failed": 1,
             "worst_margin": 3.5, "stopped_by": "failure", "failure": {"summary": "backward FAIL b1_x dK margin 3.5"}}]})
    # An older run of the same device: GoogleTest's JSON only, never shown once records exist.
    write_json(os.path.join(d, "test-gpu", "2026-11-20-old", "gtest-test_backward_gpu.json"), {
        "testsuites": [{"name": "BackwardGpu", "testsuite": [{"name": "OldTest", "result": "COMPLETED"}]}]})
    # Another device with GoogleTest's JSON only.
    write_json(os.path.join(d, "other-gpu", "2026-11-20-gate", "gtest-test_backward_gpu.json"), {
        "date": "2026-11-20T00:00:00Z", "testsuites": [{"name": "BackwardGpu", "testsuite": [
            {"name": "GradientsAgreeWithTheOracleOnTheGrid", "result": "COMPLETED"},
            {"name": "EveryBackwardMutantIsKilled", "result": "COMPLETED",
             "failures": [{"failure": "1 backward mutant(s) survived"}]}]}]})


def text(h):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " | ", h))


class Section(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        write_run(self.tmp.name)
        self.recs = records.load([self.tmp.name])

    def tearDown(self):
        self.tmp.cleanup()

    def test_gpu_checks_show_each_rows_counts(self):
        t = text(backward.gpu_checks(self.recs))
        self.assertIn("backward grid | | tiled_bwd | | 72 | | 0", t)
        self.assertIn("tiled_bwd_det | | 72 | | 1", t)
        self.assertIn("250 runs of b2_x bitwise equal", t)
        self.assertNotIn("OldTest", t)  # the device has records: its GoogleTest JSON is not repeated
        # The device without records: GoogleTest's verdict per test, the failed one counted as failed.
        self.assertIn("other-gpu | | GoogleTest (test_backward_gpu) | | BackwardGpu.EveryBackwardMutantIsKilled | | 1 | | 1", t)
        self.assertIn("BackwardGpu.GradientsAgreeWithTheOracleOnTheGrid | | 1 | | 0", t)

    def test_random_shards_of_one_run_are_summed(self):
        # A soak in shards: one random record per seed in the same run, summed per check and subject;
        # an older run's random record is not added to them.
        run = os.path.join(self.tmp.name, "test-gpu", "2026-11-26-bwd")
        for seed, n, failed in ((101, 2600, 0), (102, 2600, 1)):
            write_json(os.path.join(run, f"soak/s{seed}", "backward-random.json"), header("backward_gpu") | {
                "test": "random", "seed": seed, "cases": n, "rows": [row("backward random", "mma_bwd", n, failed)]})
        write_json(os.path.join(self.tmp.name, "test-gpu", "2026-11-20-old", "backward-random.json"),
                   header("backward_gpu", "2026-11-20T00:00:00Z") | {"test": "random", "seed": 1,
                                                                    "rows": [row("backward random", "mma_bwd", 100, 0)]})
        t = text(backward.gpu_checks(records.load([self.tmp.name])))
        self.assertIn("backward random | | mma_bwd | | 5200 | | 1 | | 2 records, seeds 101, 102", t)
        self.assertIn("test-gpu/2026-11-26-bwd: 2 records", t)
        self.assertNotIn("| 5300 |", t)

    def test_an_older_runs_random_rows_stay_for_the_kernels_no_newer_run_has(self):
        # 2026-11-27: a soak of the two k128 kernels alone, after a run of the other four; the older
        # run's all-kernel row is hidden once newer runs cover each of its kernels.
        d = self.tmp.name
        write_json(os.path.join(d, "test-gpu", "2026-11-24-all", "backward-random.json"),
                   header("backward_gpu", "2026-11-24T00:00:00Z") | {"test": "random", "seed": 1,
                                                                    "rows": [row("backward random", "mma_bwd, mma_bwd_k128", 41, 0)]})
        write_json(os.path.join(d, "test-gpu", "2026-11-25-four", "backward-random.json"),
                   header("backward_gpu", "2026-11-25T00:00:00Z") | {"test": "random", "seed": 1,
                                                                    "rows": [row("backward random", "mma_bwd", 20000, 0)]})
        for seed in (401, 402):
            write_json(os.path.join(d, "test-gpu", "2026-11-27-k128", f"s{seed}", "backward-random.json"),
                       header("backward_gpu", "2026-11-27T00:00:00Z") | {"test": "random", "seed": seed, "rows": [
                           row("backward random", "mma_bwd_k128 f16", 1300, 0) | {"kernel": "mma_bwd_k128"},
                           row("backward random", "mma_bwd_k128 bf16", 1300, 0) | {"kernel": "mma_bwd_k128"}]})
        t = text(backward.gpu_checks(records.load([d])))
        self.assertIn("mma_bwd_k128 f16 | | 2600 | | 0 | | 2 records, seeds 401, 402", t)
        self.assertIn("mma_bwd | | 20000 | | 0", t)
        self.assertNotIn("| 41 |", t)

    def test_mutants_show_the_shrunk_case_and_a_survivor(self):
        t = text(backward.mutants(self.recs))
        self.assertIn("bwd_dq_race | | killed | | b1_hq2_hkv2_sq64_sk2048_d64_f16 | | b1_hq1_hkv1_sq1_sk512_d8_f16", t)
        self.assertIn("bwd_no_rowsum_d | | SURVIVED", t)

    def test_torch_backward_subjects_only_with_their_version(self):
        t = text(backward.torch_subjects(self.recs))
        self.assertIn("sdpa-flash-bwd | | bf16 | | 640 | | 12 | | 0 | | 0.41 | | time budget | | torch 2.9.0", t)
        self.assertIn("sdpa-cudnn-bwd | | f16 | | 37 | | 0 | | 1 | | 3.50 | | failure", t)
        self.assertIn("backward FAIL b1_x dK margin 3.5", t)
        self.assertNotIn("sdpa-flash |", t)  # the forward subject is the forward's

    def test_speed_is_a_same_call_ratio_to_torch_flash(self):
        rows = {(x["case"], x["impl"]): x for x in backward.speed_rows(self.recs)}
        self.assertAlmostEqual(rows[("prefill:b8_d64_f16", "tiled_bwd")]["ratio"], 0.25)
        self.assertIsNone(rows[("prefill:b8_d128_f16", "tiled_bwd")]["ratio"])  # flash refused: no ratio
        self.assertIsNone(rows[("prefill:b8_d64_f16", "torch-cudnn")]["ratio"])
        t = text(backward.speed(self.recs))
        self.assertIn("tiled_bwd | | 50.00 | | 2.000 | | 0.25x", t)
        self.assertIn("torch-cudnn (torch 2.9.0) | | 250.00", t)
        self.assertIn("2.5x the forward", t)

    def test_speed_summary_per_call_against_flash_and_cudnn(self):
        # Two calls on one device: each kernel's geometric mean over the cases both sides timed in its own
        # call, against flash and cuDNN; the best of ours per case; the dispatched kernel marked.
        run = os.path.join(self.tmp.name, "test-gpu", "2026-11-27-bwd2")
        write_json(os.path.join(run, "bench-backward.json"), header("bench", "2026-11-27T00:00:00Z") | {"pass": "backward", "results": [
            {"impl": "flashprobe", "kernel": "a", "dispatched": "b", "case": "c1", "tflops": 100.0, "median_ms": 1.0},
            {"impl": "flashprobe", "kernel": "b", "dispatched": "b", "case": "c1", "tflops": 50.0, "median_ms": 2.0},
            {"impl": "flashprobe", "kernel": "a", "dispatched": "b", "case": "c2", "tflops": 25.0, "median_ms": 4.0},
            {"impl": "flashprobe", "kernel": "b", "dispatched": "b", "case": "c2", "tflops": 100.0, "median_ms": 1.0}]})
        write_json(os.path.join(run, "bench-backward-torch.json"), header("bench", "2026-11-27T00:00:00Z") | {"pass": "backward", "results": [
            {"impl": "torch-flash", "case": "c1", "tflops": 200.0, "median_ms": 0.5},
            {"impl": "torch-flash", "case": "c2", "tflops": 50.0, "median_ms": 2.0},
            {"impl": "torch-cudnn", "case": "c1", "tflops": 400.0, "median_ms": 0.25}]})
        recs = records.load([self.tmp.name])
        got = {(x["run"].split("/")[-1], x["impl"]): x for x in backward.speed_summary_rows(recs)}
        best = got[("2026-11-27-bwd2", "best of ours")]
        self.assertEqual(best["flash"][0], 2)
        self.assertAlmostEqual(best["flash"][1], (0.5 * 2.0) ** 0.5)          # 100/200 on c1, 100/50 on c2
        self.assertEqual(best["cudnn"][:2], (1, 0.25))                         # cuDNN timed c1 only
        self.assertAlmostEqual(got[("2026-11-27-bwd2", "a")]["flash"][1], (0.5 * 0.5) ** 0.5)
        self.assertTrue(got[("2026-11-27-bwd2", "b")]["dispatched"])
        self.assertFalse(got[("2026-11-27-bwd2", "a")]["dispatched"])
        # The older call's kernel is divided by its own call's flash only (50/200), never by the newer's.
        self.assertEqual(got[("2026-11-26-bwd", "tiled_bwd")]["flash"][:2], (1, 0.25))
        self.assertEqual(got[("2026-11-26-bwd", "tiled_bwd")]["cudnn"][:2], (1, 0.2))
        t = text(backward.speed(recs))
        self.assertIn("b (dispatched) | | 0.707 (0.250-2.000), 2 cases", re.sub(r"\s+", " ", t))

    def test_forward_tables_leave_backward_timings_out(self):
        # A forward run of the same call, with the same case id: its ratios never see the backward's.
        write_json(os.path.join(self.tmp.name, "test-gpu", "2026-11-26-bwd", "bench-flashprobe.json"), header("bench") | {
            "results": [{"impl": "flashprobe", "kernel": "mma", "case": "prefill:b8_d64_f16", "median_ms": 1.0,
                         "tflops": 100.0}]})
        recs = records.load([self.tmp.name])
        runs = perf.bench_runs(recs.of("bench"))
        self.assertEqual(len(runs), 1)
        self.assertEqual(set(runs[0].times), {("mma", "prefill:b8_d64_f16")})
        self.assertEqual(len(backward.speed_rows(recs)), 4)  # the refused timing has none

    def test_no_records_say_so(self):
        empty = records.Records()
        h = backward.backward_section(empty)
        self.assertEqual(h.count("class='none'"), 4)
        for part in ("bwd-bench", "torch-props", "backward-mutants.json", "run-all bwd"):
            self.assertIn(part, h)


class Report(unittest.TestCase):
    def test_the_built_report_has_the_section_from_records(self):
        with tempfile.TemporaryDirectory() as d:
            write_run(os.path.join(d, "data"))
            out = os.path.join(d, "out")
            p = subprocess.run([os.path.join(root, "reports", "build_report.py"), "--data", os.path.join(d, "data"),
                                "--out", out], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            h = read_text(os.path.join(out, "index.html"))
            self.assertIn("<a href='#backward'>backward</a>", h)
            sec = h[h.index("<h2 id='backward'>"):h.index("<h2 id='resources'>")]
            for anchor in ("backward-gpu", "backward-mutants", "backward-torch", "backward-speed"):
                self.assertIn(f"id='{anchor}'", sec)
            self.assertIn("0.25x", sec)
            self.assertIn("b1_hq1_hkv1_sq1_sk512_d8_f16", sec)

    def test_the_shipped_data_shows_the_h100_backward_tests(self):
        recs = records.load([DATA], allow=None)
        t = text(backward.gpu_checks(recs))
        self.assertIn("h100-80gb-hbm3", t)
        # 2026-11-26-bwd-ada6362: mma_bwd's 20,000 problems (seed 1) and its eight shards of 2,600
        self.assertIn("backward random | | mma_bwd | | 40800 | | 0", t)


if __name__ == "__main__":
    unittest.main()
