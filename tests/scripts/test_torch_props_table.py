#!/usr/bin/env python3
"""reports/baselines/torch_props_table.py: a torch_props record as its README's table (the backward cases judged
NOT BOUNDED in a column of their own, 0 for rows of older records without the count), with the totals, every
failure's summary (each shard's), each crash with its shrunk case, and the replay record beside it."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "reports", "baselines", "torch_props_table.py")

REC = {"schema": "flashprobe.torch_props/1", "environment": {"torch": "2.11.0", "cuda": "13.0", "gpu": "H100"},
       "jobs": 12, "budget_s": 370, "seconds": 360.5,
       "runs": [{"subject": "sdpa-cudnn", "dtype": "f16", "target": 1000, "checked": 1000, "refused": 80, "failed": 0,
                 "stopped_by": "target", "seconds": 70.1},
                {"subject": "flex", "dtype": "bf16", "target": 1000, "checked": 640, "refused": 0, "failed": 1, "crashed": 1,
                 "stopped_by": "time budget", "seconds": 350.0,
                 "crashes": [{"id": "b1_big", "error": "LoweringException: boom",
                              "shrunk": {"reproduced": True, "id": "b1_hq2_hkv1_sq1", "steps": ["batch 1", "sq 1"],
                                         "saved": "failures/crash-flex-bf16-s0-0/shrunk-case.json"}}]},
                {"subject": "sdpa-math", "dtype": "f16", "empty_rows": True, "target": 100, "checked": 100,
                 "stopped_by": "target"},
                # Two shards that both failed (merge keeps the first in "failure" and every one in "failures").
                {"subject": "sdpa-cudnn", "dtype": "bf16", "target": 1000, "checked": 390, "failed": 1,
                 "unbounded": 3, "stopped_by": "failure", "shards": 2,
                 "failure": {"summary": "FAIL b2_sq6", "saved": "failures/sdpa-cudnn-bf16-s0/b2_sq6"},
                 "failures": [{"summary": "FAIL b2_sq6", "saved": "failures/sdpa-cudnn-bf16-s0/b2_sq6"},
                              {"summary": "FAIL b1_sq4", "saved": "failures/sdpa-cudnn-bf16-s1/b1_sq4"}]},
                # A record written before "failures": its one failure still shows.
                {"subject": "sdpa-flash-bwd", "dtype": "f16", "target": 300, "checked": 184, "failed": 1,
                 "stopped_by": "failure", "failure": {"summary": "backward FAIL b1_sk5"}},
                # A backward row whose large-logit cases were judged NOT BOUNDED.
                {"subject": "sdpa-cudnn-bwd", "dtype": "bf16", "target": 300, "checked": 300, "refused": 2,
                 "unbounded": 17, "failed": 0, "stopped_by": "target", "seconds": 90.0}]}


class Table(unittest.TestCase):
    def test_rows_totals_crashes_and_replay(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "torch_props.json"), "w") as f:
                json.dump(REC, f)
            os.makedirs(os.path.join(d, "replay"))
            with open(os.path.join(d, "replay", "replay.json"), "w") as f:
                json.dump({"source": "flex_crash_083d889.json", "case": {"problem": {"sq": 103}},
                           "subjects": [{"subject": "flex-exact", "verdict": "passed", "summary": "PASS b1"}]}, f)
            p = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "torch_props.json")], capture_output=True,
                               text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        self.assertIn("| subject | dtype | checked | target | refused | not bounded | failed | crashed | stopped by | s |", out)
        self.assertIn("| sdpa-cudnn | f16 | 1000 | 1000 | 80 | 0 | 0 | 0 | target | 70.1 |", out)
        self.assertIn("| flex | bf16 | 640 | 1000 | 0 | 0 | 1 | 1 | time budget | 350.0 |", out)
        self.assertIn("| sdpa-math (empty rows) | f16 | 100 |", out)
        self.assertIn("| sdpa-cudnn | bf16 | 390 | 1000 | 0 | 3 | 1 | 0 | failure |", out)
        self.assertIn("| sdpa-cudnn-bwd | bf16 | 300 | 300 | 2 | 17 | 0 | 0 | target | 90.0 |", out)
        self.assertIn("Main runs: 5, 2514 cases checked, 2 at their target, 20 not bounded, 3 failed.", out)
        self.assertIn("- sdpa-cudnn bf16 failed: FAIL b2_sq6 (`failures/sdpa-cudnn-bf16-s0/b2_sq6`)", out)
        self.assertIn("- sdpa-cudnn bf16 failed: FAIL b1_sq4 (`failures/sdpa-cudnn-bf16-s1/b1_sq4`)", out)
        self.assertEqual(out.count("FAIL b2_sq6"), 1, out)
        self.assertIn("- sdpa-flash-bwd f16 failed: backward FAIL b1_sk5", out)
        self.assertIn("flex bf16 crashed on b1_big: LoweringException: boom; shrunk to b1_hq2_hkv1_sq1 (batch 1, sq 1), "
                      "`failures/crash-flex-bf16-s0-0/shrunk-case.json`", out)
        self.assertIn("- flex-exact: passed PASS b1", out)

    def test_usage(self):
        p = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
