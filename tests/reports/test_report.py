#!/usr/bin/python3
"""reports/build_report.py end to end: from records of every kind (made here, shaped as the tools
write them; the layout is a shipped probe record's own) and from the shipped reports/data, the
report builds, opens with the summary, has every section, marks a skipped gate red, and every figure
it references exists and is a PNG or SVG. Bad usage exits 2."""
import glob, os, re, subprocess, tempfile, unittest

from fixtures import ROOT as root, read_head, read_json, read_text, write_json

builder = os.path.join(root, "reports", "build_report.py")
SECTIONS = ["summary", "details", "layouts", "accuracy", "performance", "backward", "resources", "calibration", "records"]
DEV = {"name": "Test GPU", "arch": "sm_90", "vendor": "nvidia", "driver_version": 13000, "runtime_version": 13000}


def header(kind, device=True):
    return {"schema": f"flashprobe.{kind}/1", "commit": "abc1234", "date": "2026-11-23T00:00:00Z",
            "device": DEV if device else None}


def build(data, out, *extra):
    p = subprocess.run([builder, "--data", data, "--out", out, *extra], capture_output=True, text=True)
    return p, (read_text(os.path.join(out, "index.html")) if p.returncode == 0 else "")


def figures_ok(test, html, out):
    figs = re.findall(r"<img src='([^']+)'", html)
    for f in figs:
        p = os.path.join(out, f)
        test.assertTrue(os.path.isfile(p), f"figure {f} missing")
        head = read_head(p)
        test.assertTrue(head == b"\x89PNG\r\n\x1a\n" or head.startswith(b"<svg"), f"{f} is not a PNG or SVG")
    return figs


class Synthetic(unittest.TestCase):
    def test_every_kind(self):
        probe_file = sorted(glob.glob(os.path.join(root, "reports", "data", "*", "*", "probes", "probe-SM80_16x8x16_*.json")))[0]
        shipped = read_json(probe_file)
        with tempfile.TemporaryDirectory() as d:
            run = os.path.join(d, "data", "test-gpu", "2026-11-23-run")
            os.makedirs(run)
            probe = header("probe") | {"source": "hardware", "atom": shipped["atom"], "ok": True, "verdict": "matches",
                                       "layout": shipped["layout"], "result": shipped["result"]}
            grid = header("kernel_grid") | {"test": "mma", "run": 8, "passed": 8, "cases": [
                {"kernel": "mma", "pass": True, "problem": {"dtype": dt, "sk": sk}, "o": {"error": 1e-3, "margin": 0.2}}
                for dt in ("f16", "bf16") for sk in (1, 3, 65, 129)]}
            bench = header("bench") | {"timing": "graph", "ceilings": {"d2d_copy_gbps": 3000.0, "bf16_gemm_tflops": 790.0},
                                       "results": [{"impl": i, "kernel": k, "group": "prefill", "median_ms": ms,
                                                    "case": f"prefill:b{16384 // s}_hq16_hkv16_sq{s}_sk{s}_d128_f16",
                                                    "flops": 1e12, "bytes": 1e9}
                                                   for s in (1024, 2048, 4096)
                                                   for i, k, ms in (("flashprobe", "wgmma", 1.0), ("flashprobe", "mma", 1.6),
                                                                    ("torch-flash", "flash", 1.5), ("torch-cudnn", "cudnn", 0.9))]}
            res = {"schema": "flashprobe.resources/1", "status": "compiled, not run", "date": "2026-11-23",
                   "kernels": [{"target": "gfx1100", "kernel": "mma_fwd", "vgpr": 128, "agpr": 0, "sgpr": 40,
                                "lds_bytes": 34816, "scratch_bytes": 0, "waves_per_simd": 8}]}
            muts = header("mutants") | {"mutants": [{"name": "softmax_block_not_pow2", "killed": True, "killed_by": "oracle"}]}
            cal = header("calibration", device=False) | {"defaults_correct_runs": 100, "defaults_false_failures": 0,
                                                         "planted_bugs": [{"name": "b", "observable": 10, "killed": 9}]}
            soak = header("prop_soak") | {"rows": [{"kernel": "mma", "dtype": "bf16", "property": "AgreesWithOracle",
                                                    "cases": 10010, "skipped": False, "failures": 0}]}
            gate = {"timestamp": "2026-11-23T00:00:00Z", "testsuites": [{"name": "K", "testsuite": [
                {"name": "Holds/mma_A", "value_param": '("mma", "A")', "result": "COMPLETED"},
                {"name": "Holds/decode_A", "value_param": '("decode", "A")', "result": "SKIPPED"}]}]}
            for name, r in (("probe-x.json", probe), ("kernel_grid_mma.json", grid), ("bench.json", bench),
                            ("mutants.json", muts), ("prop_soak.json", soak), ("gtest-test_kernel_props.json", gate)):
                write_json(os.path.join(run, name), r)
            for sub, name, r in (("amd-compiled/2026-11-23-x", "res.json", res), ("cpu", "cal.json", cal)):
                write_json(os.path.join(d, "data", sub, name), r)
            with open(os.path.join(run, "device-info.txt"), "w") as f:
                f.write("name, driver_version\nTest GPU, 999.1.2, 81559 MiB, 1980 MHz\n")
            os.makedirs(os.path.join(d, "data", "test-gpu", "2026-11-22-old"))
            write_json(os.path.join(d, "data", "test-gpu", "2026-11-22-old", "mutants.json"),
                       header("mutants") | {"date": "2026-11-25T00:00:00Z", "mutants": [{"name": "old", "killed": False}]})
            with open(os.path.join(d, "data", "INDEX.md"), "w") as f:
                f.write("| run | date | commit | status | what it showed |\n| --- | --- | --- | --- | --- |\n"
                        "| test-gpu/2026-11-23-run | 2026-11-23 | abc1234 | current | everything |\n"
                        "| test-gpu/2026-11-22-old | 2026-11-22 | abc1234 | decision | an experiment, not summarized |\n"
                        "| amd-compiled/2026-11-23-x | 2026-11-23 | abc1234 | current | resources |\n"
                        "| cpu | 2026-11-23 | abc1234 | current | calibration |\n")
            out = os.path.join(d, "out")
            p, html = build(os.path.join(d, "data"), out)
            self.assertEqual(p.returncode, 0, p.stderr)
            for s in SECTIONS:
                self.assertIn(f"id='{s}'", html, s)
            self.assertLess(html.index("id='summary'"), html.index("id='layouts'"))
            figs = figures_ok(self, html, out)
            self.assertGreaterEqual(len([f for f in figs if f.startswith("perf_")]), 1)
            self.assertIn("layout_000.svg", figs)
            summary = html[html.index("id='summary'"):html.index("id='details'")]
            self.assertRegex(summary, r"class='num bad'>1 run · 1 skipped · 0 failed<")  # the skipped gate, in red
            self.assertIn("decode: properties that ran zero cases: 1", summary)
            self.assertIn("1 of 1 killed", summary)
            self.assertIn("driver 999.1.2", summary)
            self.assertRegex(summary, r"wgmma<br><small>/ flash</small>")
            self.assertIn("no record yet", summary)  # AMD: nothing emulated or measured
            self.assertNotIn("old", summary)  # a decision run is listed, never summarized
            self.assertIn("an experiment, not summarized", html)
            perf_caps = re.findall(r"<figcaption><b>Prefill[^<]*</b> <small>([^<]*)</small>", html)
            self.assertTrue(perf_caps)
            for cap in perf_caps:
                for needle in ("record: test-gpu/2026-11-23-run", "Test GPU (sm_90)", "driver 999.1.2", "commit abc1234",
                               "2026-11-23", "kernels: mma, wgmma", "baselines (same run): cudnn, flash"):
                    self.assertIn(needle, cap)


class MainJobRecords(unittest.TestCase):
    def test_a_folder_without_index_is_one_run(self):
        with tempfile.TemporaryDirectory() as d:
            write_json(os.path.join(d, "recs", "probes", "probe-x.json"),
                       header("probe") | {"source": "hardware", "atom": "SM80_X", "ok": True, "verdict": "matches"})
            write_json(os.path.join(d, "recs", "bench-flashprobe.json"), header("bench") | {"results": []})
            p, html = build(os.path.join(d, "recs"), os.path.join(d, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("2 records of 1 run ", html)
            self.assertIn("Test GPU (sm_90)", html)


class Shipped(unittest.TestCase):
    def test_shipped_data(self):
        with tempfile.TemporaryDirectory() as d:
            p, html = build(os.path.join(root, "reports", "data"), d)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("could not be read", html)
            figs = figures_ok(self, html, d)
            self.assertTrue(any(f.startswith("perf_") for f in figs))
            # The dispatcher's Hopper kernel is in every prefill figure of the H100.
            for cap in re.findall(r"<figcaption><b>Prefill[^<]*</b> <small>([^<]*)</small>", html):
                self.assertIn("wgmma", cap)
            # The newest H100 records are PyTorch's bench (a device without its runtime): the title
            # keeps the CUDA version of the newest record that states one.
            self.assertIn("NVIDIA H100 80GB HBM3 (sm_90), driver 580.159.04, CUDA 13.0", html)

    def test_readme_cites_the_soaks_the_summary_counts(self):
        """The README quotes soak numbers: it cites every run the summary's soak row counts (the largest
        current soak of each pair, summary.counted_per_subject) and the newest shown beside them, so that
        the README and the report rest on the same soaks."""
        import sys
        sys.path.insert(0, os.path.join(root, "reports"))
        from fpreport import index, records, summary
        data = os.path.join(root, "reports", "data")
        recs = records.load([data], allow=index.allow_current(index.parse(os.path.join(data, "INDEX.md"))))
        blocks, _ = summary.collect(recs)
        readme = read_text(os.path.join(root, "README.md"))
        cited = index.cited_runs(readme)
        runs = {i.record.run.split("/")[-1] for rows in blocks.values() if "soak" in rows
                for i in rows["soak"].items + rows["soak"].newest}
        self.assertTrue(runs)
        self.assertEqual(sorted(runs - cited), [], "soak runs the report counts or shows that the README does not cite")

    def test_bad_usage(self):
        with tempfile.TemporaryDirectory() as d:
            p, _ = build(os.path.join(d, "nope"), d)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not a directory", p.stderr)
            p, _ = build(os.path.join(root, "reports", "data"), d, "--with", os.path.join(d, "missing.json"))
            self.assertEqual(p.returncode, 2)
            self.assertIn("missing.json: no such file", p.stderr)


if __name__ == "__main__":
    unittest.main()
