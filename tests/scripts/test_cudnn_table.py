#!/usr/bin/env python3
"""scripts/gpu/cudnn_table.py on made-up records: the join of flashprobe's and PyTorch's timings by
case, the dispatched and fastest columns, the geometric mean and worst case against cuDNN, and the
target's verdict, which a missing case or a timing that was not a graph replay must deny; the order
drift per position where bench recorded order_position."""
import io
import json
import math
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import cudnn_table as ct  # noqa: E402

CASES = ct.expected_cases()
WORST = "prefill:b8_hq32_hkv32_sq2048_sk2048_d64_f16_causal"


def fp(kernel, ms_of, dispatched="wgmma", timing="graph", skip=()):
    return {"commit": "abc", "results": [
        {"impl": "flashprobe", "kernel": kernel, "group": c.split(":")[0], "case": c, "median_ms": ms_of(c),
         "timing": timing, "dispatched": dispatched} for c in CASES if c not in skip]}


def torch_rec(skip=(), timing="graph"):
    res = []
    for c in CASES:
        if c in skip:
            res.append({"impl": "torch-cudnn", "group": c.split(":")[0], "case": c, "refused": "no engine"})
            continue
        res.append({"impl": "torch-cudnn", "kernel": "cudnn", "group": c.split(":")[0], "case": c, "median_ms": 1.0,
                    "timing": timing})
        res.append({"impl": "torch-flash", "kernel": "flash", "group": c.split(":")[0], "case": c, "median_ms": 2.0,
                    "timing": timing})
    # decode is not part of the target
    res.append({"impl": "torch-cudnn", "group": "decode", "case": "decode:x", "median_ms": 1.0, "timing": "graph"})
    return {"device": {"name": "H100"}, "results": res}


# wgmma: 1.25 ms everywhere but WORST (2 ms); mma: 0.9 ms everywhere (faster than cuDNN).
WG = fp("wgmma", lambda c: 2.0 if c == WORST else 1.25)
MMA = fp("mma", lambda c: 0.9)


class CudnnTable(unittest.TestCase):
    def test_order_drift_per_position(self):
        # Two kernels of equal speed, alternating first and second; whichever goes second takes 10 % longer.
        recs = []
        for name in ("a", "b"):
            rec = fp(name, lambda c: 1.0)
            for i, r in enumerate(rec["results"]):
                r["order_position"] = (i + (name == "b")) % 2
                r["median_ms"] = 1.1 if r["order_position"] == 1 else 1.0
            recs.append(rec)
        d = ct.order_drift(recs)
        self.assertEqual(set(d), {"a", "b"})
        for k in ("a", "b"):
            self.assertEqual(d[k][0]["cases"] + d[k][1]["cases"], 52)
            self.assertAlmostEqual(d[k][1]["offset"] / d[k][0]["offset"], 1.1)
        self.assertEqual(ct.order_drift([WG, MMA]), {})  # no order_position recorded: nothing to say
        self.assertIn("position 1 ", ct.drift_lines(d)[0])

    def test_the_grid_is_the_full_prefill_and_whisper_grid(self):
        self.assertEqual(len(CASES), 52)  # 2 dtypes x 2 dims x 2 masks x 6 lengths + 4 Whisper
        self.assertIn("whisper:b4_hq16_hkv16_sq1500_sk1500_d64_f16", CASES)
        self.assertIn("prefill:b1_hq16_hkv16_sq16384_sk16384_d128_bf16_causal", CASES)

    def test_ratios_geomean_worst_and_dispatched(self):
        cases = ct.join([WG, MMA], torch_rec())
        cols = ct.columns(cases)
        self.assertEqual(cols, ["dispatched", "fastest", "wgmma", "mma", "torch-flash"])
        s = ct.summarise(cases, CASES, cols)
        want = math.exp((51 * math.log(0.8) + math.log(0.5)) / 52)
        self.assertAlmostEqual(s["wgmma"]["geomean"], want)
        self.assertEqual(s["wgmma"]["worst"], {"case": WORST, "ratio": 0.5})
        self.assertEqual(len(s["wgmma"]["below_floor"]), 52)
        self.assertFalse(s["wgmma"]["target_met"])
        self.assertAlmostEqual(s["dispatched"]["geomean"], want)  # the dispatcher named wgmma
        self.assertAlmostEqual(s["mma"]["geomean"], 1 / 0.9)
        self.assertTrue(s["mma"]["target_met"])
        self.assertTrue(s["fastest"]["target_met"])
        self.assertEqual(cases[WORST]["fastest"], "mma")
        self.assertAlmostEqual(s["torch-flash"]["geomean"], 0.5)

    def test_a_missing_case_denies_the_target(self):
        gone = CASES[5]
        cases = ct.join([fp("mma", lambda c: 0.9, skip=(gone,))], torch_rec())
        s = ct.summarise(cases, CASES, ct.columns(cases))
        self.assertEqual(s["mma"]["missing"], [gone])
        self.assertFalse(s["mma"]["target_met"])
        # cuDNN refusing a case: missing for every column as well
        cases = ct.join([MMA], torch_rec(skip=(gone,)))
        s = ct.summarise(cases, CASES, ct.columns(cases))
        self.assertEqual(s["mma"]["missing"], [gone])
        self.assertEqual(cases[gone]["refused"], {"torch-cudnn": "no engine"})
        self.assertFalse(s["mma"]["target_met"])

    def test_the_dispatched_kernel_not_timed_is_missing(self):
        cases = ct.join([fp("mma", lambda c: 0.9, dispatched="wgmma")], torch_rec())
        s = ct.summarise(cases, CASES, ct.columns(cases))
        self.assertEqual(len(s["dispatched"]["missing"]), 52)
        self.assertFalse(s["dispatched"]["target_met"])

    def test_launch_timing_on_either_side_denies_the_target(self):
        for recs, trec in (([fp("mma", lambda c: 0.9, timing="launch")], torch_rec()),
                           ([MMA], torch_rec(timing="launch"))):
            cases = ct.join(recs, trec)
            s = ct.summarise(cases, CASES, ct.columns(cases))
            self.assertEqual(len(s["mma"]["not_graph_timed"]), 52)
            self.assertFalse(s["mma"]["target_met"])

    def test_command_line_writes_json_and_markdown(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, rec in (("wg", WG), ("mma", MMA), ("torch", torch_rec())):
                paths[name] = os.path.join(d, name + ".json")
                with open(paths[name], "w") as f:
                    json.dump(rec, f)
            out, md = os.path.join(d, "out.json"), os.path.join(d, "out.md")
            buf = io.StringIO()
            with redirect_stdout(buf):
                rc = ct.main([paths["wg"], paths["mma"], "--torch", paths["torch"], "--json", out, "--md", md])
            self.assertEqual(rc, 0)
            self.assertIn("NOT MET", buf.getvalue())
            with open(out) as f:
                rec = json.load(f)
            self.assertEqual(rec["schema"], "flashprobe.vs_cudnn/1")
            self.assertEqual(rec["device"], "H100")
            self.assertEqual(rec["commit"], "abc")
            self.assertEqual(rec["columns"]["wgmma"]["worst"]["case"], WORST)
            self.assertNotIn("decode:x", rec["cases"])
            with open(md) as f:
                text = f.read()
            self.assertIn("| wgmma | 52/52 |", text)
            self.assertIn(f"| {WORST} | wgmma | 1000.0 |", text)
            # no flashprobe timing at all: exit 2
            with open(paths["wg"], "w") as f:
                json.dump({"results": []}, f)
            with redirect_stdout(io.StringIO()):
                self.assertEqual(ct.main([paths["wg"], "--torch", paths["torch"]]), 2)


if __name__ == "__main__":
    unittest.main()
