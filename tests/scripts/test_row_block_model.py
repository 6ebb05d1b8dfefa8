#!/usr/bin/env python3
"""scripts/gpu/row_block_model.py on made-up records: the fit recovers a known fixed cost per row
block and rate (with and without a causal mask), and the per-shape ratio to cuDNN splits into the
per-tile and fixed-cost factors whose product is the model."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import row_block_model as rbm  # noqa: E402

SEQS = (512, 1024, 2048, 4096, 8192, 16384)


def case(s, d, causal, dtype="f16"):
    return f"prefill:b{16384 // s}_hq{2048 // d}_hkv{2048 // d}_sq{s}_sk{s}_d{d}_{dtype}" + ("_causal" if causal else "")


def records(params):
    """params: {impl: {(d, causal): (x, R)}} -> (flashprobe record, torch record)"""
    fp, tr = [], []
    for impl, by in params.items():
        for (d, causal), (x, r) in by.items():
            for s in SEQS:
                row = {"group": "prefill", "case": case(s, d, causal), "tflops": r * rbm.shape(s / 128, causal, x)}
                if impl.startswith("torch-"):
                    tr.append({"impl": impl, **row})
                else:
                    fp.append({"impl": "flashprobe", "kernel": impl, **row})
    return {"results": fp}, {"results": tr}


PARAMS = {"wgmma": {(64, False): (3.0, 400.0), (64, True): (4.0, 390.0), (128, False): (2.85, 580.0)},
          "torch-cudnn": {(64, False): (1.0, 480.0), (64, True): (1.25, 470.0), (128, False): (0.8, 610.0)}}


class RowBlockModel(unittest.TestCase):
    def test_fit_recovers_the_fixed_cost_and_rate(self):
        for causal in (False, True):
            pts = [(s / 128, 500 * rbm.shape(s / 128, causal, 2.5)) for s in SEQS]
            x, r, rms = rbm.fit(pts, causal)
            self.assertAlmostEqual(x, 2.5, places=6)
            self.assertAlmostEqual(r, 500, places=6)
            self.assertLess(rms, 1e-9)

    def test_per_shape_factors(self):
        fp, tr = records(PARAMS)
        rates = rbm.load_rates_from([fp, tr])
        fits, rows = rbm.model(rates, "wgmma", dx=1.0)
        self.assertAlmostEqual(fits[(64, True, "f16")]["impl"]["x"], 4.0, places=6)
        self.assertAlmostEqual(fits[(64, True, "f16")]["ref"]["x"], 1.25, places=6)
        self.assertEqual(len(rows), 3 * len(SEQS))
        for r in rows:
            self.assertAlmostEqual(r["measured"], r["model"], places=9)
            self.assertAlmostEqual(r["model"], r["per_tile"] * r["fixed"], places=12)
            self.assertGreater(r["with_dx"], r["model"])  # a smaller fixed cost helps every shape
        r = next(r for r in rows if r["case"] == case(2048, 64, True))
        self.assertAlmostEqual(r["per_tile"], 390 / 470)
        self.assertAlmostEqual(r["fixed"], (16 + 1 + 2 * 1.25) / (16 + 1 + 8))
        self.assertAlmostEqual(r["with_dx"], 390 / 470 * (16 + 1 + 2.5) / (16 + 1 + 6))

    def test_command_line(self):
        fp, tr = records(PARAMS)
        with tempfile.TemporaryDirectory() as d:
            a, b, out = (os.path.join(d, n) for n in ("fp.json", "torch.json", "out.json"))
            for path, rec in ((a, fp), (b, tr)):
                with open(path, "w") as f:
                    json.dump(rec, f)
            with redirect_stdout(io.StringIO()) as buf:
                self.assertEqual(rbm.main([a, b, "--dx", "1", "--json", out]), 0)
            self.assertIn("wgmma: x  3.00 R   400", buf.getvalue())
            with open(out) as f:
                self.assertEqual(json.load(f)["schema"], "flashprobe.row_block_model/1")
            with redirect_stderr(io.StringIO()) as err:
                self.assertEqual(rbm.main([a, b, "--impl", "mma"]), 2)
            self.assertIn("no prefill timings of 'mma'", err.getvalue())


if __name__ == "__main__":
    unittest.main()
