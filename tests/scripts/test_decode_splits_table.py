#!/usr/bin/env python3
"""scripts/gpu/decode_splits_table.py on made-up records: the join of flashprobe's and PyTorch's
timings by case, the best forced split count per case, and the one count per Sk that serves every
batch size (the split count may not depend on the batch)."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import decode_splits_table as dst  # noqa: E402


def fp_result(batch, sk, kernel, ms, planned=None):
    p = {"batch": batch, "hq": 32, "hkv": 32, "sq": 1, "sk": sk, "d": 128, "dtype": "f16"}
    r = {"impl": "flashprobe", "kernel": kernel, "case": f"custom:b{batch}_sk{sk}", "problem": p, "median_ms": ms}
    if planned is not None:
        r["planned_splits"] = planned
    return r


def torch_result(batch, sk, backend, ms):
    return {"impl": f"torch-{backend}", "kernel": backend, "case": f"custom:b{batch}_sk{sk}", "median_ms": ms}


# sk 1024: at b1, 16 splits is best (0.012 ms); at b8, 4 (0.050). The batch-invariant choice is the
# count whose worse ratio is higher: 8 (b1 0.013, b8 0.052 -> worst min(0.012/0.013, 0.050/0.052)).
FP = {"results": [
    fp_result(1, 1024, "decode", 0.0136, planned=16), fp_result(8, 1024, "decode", 0.0574, planned=16),
    fp_result(1, 1024, "decode/splits=4", 0.020), fp_result(8, 1024, "decode/splits=4", 0.050),
    fp_result(1, 1024, "decode/splits=8", 0.013), fp_result(8, 1024, "decode/splits=8", 0.052),
    fp_result(1, 1024, "decode/splits=16", 0.0120), fp_result(8, 1024, "decode/splits=16", 0.0574),
    fp_result(1, 1024, "decode/fused=on", 0.0110), fp_result(8, 1024, "decode/fused=on", 0.0500),
]}
TORCH = {"results": [torch_result(1, 1024, "cudnn", 0.012), torch_result(8, 1024, "cudnn", 0.050),
                     torch_result(1, 1024, "flash", 0.015), torch_result(8, 1024, "flash", 0.058),
                     torch_result(8, 4096, "cudnn", 0.2)]}


class DecodeSplitsTable(unittest.TestCase):
    def test_join_and_best_per_case(self):
        cases = dst.table(FP, TORCH)
        self.assertEqual(set(cases), {"custom:b1_sk1024", "custom:b8_sk1024"})  # torch-only cases are not joined
        c = cases["custom:b8_sk1024"]
        self.assertEqual((c["planned"], c["decode"], c["cudnn"], c["flash"]), (16, 0.0574, 0.050, 0.058))
        self.assertEqual(c["splits"], {4: 0.050, 8: 0.052, 16: 0.0574})

    def test_one_count_for_every_batch(self):
        (row,) = dst.batch_invariant_choice(dst.table(FP, TORCH))
        self.assertEqual(row["best_splits"], 8)
        self.assertEqual(row["batches"], [1, 8])
        self.assertAlmostEqual(row["worst_ratio_at_best"], min(0.012 / 0.013, 0.050 / 0.052))
        self.assertEqual(row["planned_splits"], [16])
        self.assertAlmostEqual(row["worst_ratio_planned"], 0.050 / 0.0574)

    def test_variants_apart_from_the_split_counts(self):
        cases = dst.table(FP, TORCH)
        self.assertEqual(cases["custom:b1_sk1024"]["variants"], {"decode/fused=on": 0.0110})
        self.assertNotIn("fused", str(cases["custom:b1_sk1024"]["splits"]))
        (row,) = dst.variant_rows(cases)
        self.assertEqual((row["variant"], row["sk"], row["batches"]), ("decode/fused=on", 1024, [1, 8]))
        self.assertAlmostEqual(row["cudnn_ratio_by_batch"]["1"], 0.012 / 0.0110)
        self.assertAlmostEqual(row["worst_cudnn_ratio"], 1.0)  # b8: 0.050 / 0.050
        self.assertAlmostEqual(row["worst_ratio_to_decode"], min(0.0136 / 0.0110, 0.0574 / 0.0500))

    def test_shapes_are_judged_apart(self):
        # The same Sk at GQA h32/8: its own plan, its own batch-invariant choice (4 here), never merged
        # with the MHA cases' (whose choice stays 8).
        def gqa(r):
            r = json.loads(json.dumps(r))
            r["problem"]["hkv"] = 8
            r["case"] = r["case"].replace("custom:", "custom:gqa_")
            return r
        fp = {"results": FP["results"] + [gqa(fp_result(1, 1024, "decode/splits=4", 0.012)),
                                          gqa(fp_result(8, 1024, "decode/splits=4", 0.050)),
                                          gqa(fp_result(1, 1024, "decode/splits=8", 0.020)),
                                          gqa(fp_result(8, 1024, "decode/splits=8", 0.060)),
                                          gqa(fp_result(1, 1024, "decode/plan=half", 0.013)),
                                          gqa(fp_result(8, 1024, "decode/plan=half", 0.051))]}
        torch = {"results": TORCH["results"] + [
            {**torch_result(b, 1024, "cudnn", ms), "case": f"custom:gqa_b{b}_sk1024"} for b, ms in ((1, 0.012), (8, 0.050))]}
        rows = dst.batch_invariant_choice(dst.table(fp, torch))
        self.assertEqual([(r["shape"], r["best_splits"]) for r in rows], [("h32/32 d128", 8), ("h32/8 d128", 4)])
        v = [r for r in dst.variant_rows(dst.table(fp, torch)) if r["variant"] == "decode/plan=half"]
        self.assertEqual([(r["shape"], r["batches"]) for r in v], [("h32/8 d128", [1, 8])])
        self.assertAlmostEqual(v[0]["worst_cudnn_ratio"], min(0.012 / 0.013, 0.050 / 0.051))
        self.assertIsNone(v[0]["worst_ratio_to_decode"])  # no shipped decode timed for that shape

    def test_command_line_writes_the_summary(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, rec in (("fp.json", FP), ("torch.json", TORCH)):
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w") as f:
                    json.dump(rec, f)
            out = io.StringIO()
            with redirect_stdout(out):
                rc = dst.main([*paths, "--json", os.path.join(d, "summary.json")])
            self.assertEqual(rc, 0)
            self.assertIn("best   8 splits", out.getvalue())
            with open(os.path.join(d, "summary.json")) as f:
                s = json.load(f)
            self.assertEqual(s["schema"], "flashprobe.decode_splits/1")
            self.assertEqual([c["best_splits"] for c in s["cases"]], [16, 4])
            self.assertEqual([v["variant"] for v in s["variants"]], ["decode/fused=on"])
            self.assertIn("decode/fused=on", out.getvalue())

    def test_no_flashprobe_results_is_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "empty.json")
            with open(p, "w") as f:
                json.dump({"results": []}, f)
            with redirect_stdout(io.StringIO()):
                self.assertEqual(dst.main([p, p]), 2)


if __name__ == "__main__":
    unittest.main()
