#!/usr/bin/env python3
"""scripts/gpu/sass_regions.py on a made-up SASS page: lines are cut into regions of equal execution
count (never-executed lines join the region they sit in), each with its instructions, executed and
sample shares, per-unit counts and top stalls; opcode totals; bad input exits 2 naming the file or
value."""
import csv
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import sass_regions as sr  # noqa: E402

HDR = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
       "Instructions Executed", "stall_wait", "stall_barrier", "stall_wait (Not Issued)"]
# (source, executed, samples, wait, barrier): a set-up run once per unit (4), a loop run 3 times per
# unit with a never-executed line inside, then a wait loop.
LINES = [("IMAD R1, R2, R3, RZ", 4, 10, 10, 0), ("ISETP.GT.AND P0, PT, R1, RZ, PT", 4, 2, 2, 0),
         ("MUFU.EX2 R4, R4", 12, 30, 20, 0), ("@P0 BRA 0x10", 0, 0, 0, 0), ("FADD R5, R5, R4", 12, 8, 8, 0),
         ("BAR.SYNC.DEFER_BLOCKING R8, 0x100", 4, 50, 0, 50)]


def page(lines=LINES, hdr=HDR):
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
    w = csv.writer(f)
    w.writerow(["Kernel Name", "void k<1>(Params)"])
    w.writerow(hdr)
    for i, (src, ex, sa, wait, bar) in enumerate(lines):
        w.writerow([hex(0x100 + 16 * i), "      " + src, sa, sa, ex, wait, bar, 0])
    f.close()
    return f.name


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            sr.main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


class SassRegions(unittest.TestCase):
    def test_regions_follow_execution_counts(self):
        _, lines = sr.read_page(page())
        self.assertEqual(sr.regions(lines), [(0, 1, 4, 2), (2, 4, 12, 2), (5, 5, 4, 1)])

    def test_report_shares_units_and_stalls(self):
        code, out, _ = run([page(), "--unit", "4", "--min-share", "0", "--opcodes", "MUFU,FADD,BRA"])
        self.assertEqual(code, 0)
        self.assertIn("executed warp instructions 36, samples 100, per unit (4) 9.0", out)
        rows = [l.split() for l in out.splitlines() if l.strip()[:1].isdigit()]
        self.assertEqual(rows[0][:6], ["0-1", "4", "2", "22.2", "12.0", "2.0"])
        self.assertEqual(rows[1][:6], ["2-4", "12", "2", "66.7", "38.0", "6.0"])
        self.assertEqual(rows[2][:6], ["5-5", "4", "1", "11.1", "50.0", "1.0"])
        self.assertIn("barrier 50.0", out)
        self.assertIn("MUFU 12 (30.0 % samples), FADD 12 (8.0 % samples), BRA 0 (0.0 % samples)", out)

    def test_small_regions_hidden_by_default_share(self):
        lines = LINES + [("NOP", 1, 0, 0, 0)] * 1 + [("IADD3 R1, R1, 1, RZ", 2000, 0, 0, 0)]
        _, out, _ = run([page(lines), "--min-share", "1"])
        counts = [l.split()[1] for l in out.splitlines() if l.strip()[:1].isdigit()]
        self.assertNotIn("1", counts, "the one-instruction NOP region is under 1 % of both")
        self.assertIn("2000", counts)
        _, out, _ = run([page(lines), "--min-share", "0"])
        self.assertIn("1", [l.split()[1] for l in out.splitlines() if l.strip()[:1].isdigit()])

    def test_bad_input_exits_2_naming_it(self):
        code, _, err = run(["/nonexistent/page.csv"])
        self.assertEqual(code, 2)
        self.assertIn("/nonexistent/page.csv", err)
        code, _, err = run([page(hdr=["Address", "Code"])])
        self.assertEqual(code, 2)
        self.assertIn("not an ncu --page source --csv file", err)
        code, _, err = run([page(), "--unit", "-3"])
        self.assertEqual(code, 2)
        self.assertIn("--unit -3", err)
        code, _, err = run([page(lines=[("IMAD", "x", 1, 0, 0)])])
        self.assertEqual(code, 2)
        self.assertIn("not a whole number", err)


if __name__ == "__main__":
    unittest.main()
