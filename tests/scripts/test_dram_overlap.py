#!/usr/bin/env python3
"""scripts/gpu/dram_overlap.py on made-up records: the line through time = a * tiles per SM + K
recovers a known slope and intercept (causal tile counts included), the intercept is compared with
the bytes' DRAM time, and bad input exits 2 naming the value."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import dram_overlap as dov  # noqa: E402

SEQS = (512, 1024, 2048, 4096, 8192)
SMS = 132
BYTES = 268435456


def rows(impl, d, causal, a, k):
    out = []
    for s in SEQS:
        b, h, nm = 16384 // s, 2048 // d, s // 128
        tiles = b * h * (nm * (nm + 1) // 2 if causal else nm * nm)
        case = f"prefill:b{b}_hq{h}_hkv{h}_sq{s}_sk{s}_d{d}_f16" + ("_causal" if causal else "")
        r = {"group": "prefill", "case": case, "median_ms": (a * tiles / SMS + k) / 1e3, "bytes": BYTES}
        out.append({"impl": "flashprobe", "kernel": impl, **r} if not impl.startswith("torch-") else {"impl": impl, **r})
    return out


def record(results):
    return {"device": {"multiprocessors": SMS}, "results": results}


class DramOverlap(unittest.TestCase):
    def test_the_line_recovers_slope_and_intercept(self):
        rec = record(rows("wgmma", 128, False, 1.9, 95.0) + rows("wgmma", 64, True, 1.3, 180.0) +
                     rows("torch-cudnn", 128, False, 1.7, 20.0))
        got = {(r["impl"], r["d"], r["causal"]): r for r in dov.fits(dov.points_of([rec]), 3.0e12, 4096)}
        for key, (a, k) in {("wgmma", 128, False): (1.9, 95.0), ("wgmma", 64, True): (1.3, 180.0),
                            ("torch-cudnn", 128, False): (1.7, 20.0)}.items():
            self.assertAlmostEqual(got[key]["us_per_tile"], a, places=6)
            self.assertAlmostEqual(got[key]["intercept_us"], k, places=4)
            self.assertAlmostEqual(got[key]["dram_us"], BYTES / 3.0e12 * 1e6, places=6)
            self.assertAlmostEqual(got[key]["intercept_over_dram"], k / (BYTES / 3.0e12 * 1e6), places=4)
            # S 8192 is past --fit-max-s but still gets its residual (zero on an exact line).
            self.assertAlmostEqual(got[key]["residual_us"][8192], 0.0, places=3)

    def test_a_wrong_tile_count_would_show(self):
        # Causal timings read as if every tile were computed: the fit must not find the true line.
        rec = record(rows("wgmma", 64, True, 1.3, 180.0))
        for r in rec["results"]:
            r["case"] = r["case"].replace("_causal", "")
        got = dov.fits(dov.points_of([rec]), 3.0e12, 4096)[0]
        self.assertGreater(abs(got["intercept_us"] - 180.0), 10.0)

    def test_bad_input_exits_2_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump({"results": rows("wgmma", 128, False, 1.9, 95.0)}, f)  # no device
            for argv, word in (([path], "multiprocessor"), ([path, "--bw", "0"], "--bw 0"),
                               ([os.path.join(d, "missing.json")], "missing.json")):
                err = io.StringIO()
                with redirect_stderr(err), redirect_stdout(io.StringIO()):
                    self.assertEqual(dov.main(argv), 2, argv)
                self.assertIn(word, err.getvalue())

    def test_prints_and_writes_json(self):
        with tempfile.TemporaryDirectory() as d:
            path, out = os.path.join(d, "r.json"), os.path.join(d, "o.json")
            with open(path, "w") as f:
                json.dump(record(rows("wgmma", 128, False, 1.9, 95.0)), f)
            buf = io.StringIO()
            with redirect_stdout(buf):
                self.assertEqual(dov.main([path, "--json", out]), 0)
            self.assertIn("d128 full f16", buf.getvalue())
            with open(out) as f:
                self.assertEqual(json.load(f)["rows"][0]["impl"], "wgmma")


if __name__ == "__main__":
    unittest.main()
