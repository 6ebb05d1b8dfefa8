#!/usr/bin/python3
"""The summary's rules (reports/fpreport/summary.py): the newest record of each subject wins, a
failure, a skip or a count not recorded is red and never reads as a pass, AMD items gather in one
block by evidence, and a missing kind of evidence says so."""
import unittest

import fixtures  # noqa: F401  (puts reports/ on the path)
from fpreport import records, summary
from fpreport.checks import Item


def rec(path, date, kind="x", **data):
    return records.Record(kind, {"date": date, "commit": "c0ffee1"} | data, path, "/")


def item(check, subject, run, skipped, failed, r, vendor=""):
    return Item(check, subject, run, skipped, failed, r, vendor=vendor)


class Rows(unittest.TestCase):
    def test_newest_record_per_subject(self):
        old = rec("h100/2026-11-23-a/x.json", "2026-11-23T00:00:00Z")
        new = rec("h100/2026-11-24-b/x.json", "2026-11-24T00:00:00Z")
        its = [item("gate", "mma", 5, 0, 1, old), item("gate", "mma", 9, 0, 0, new), item("gate", "tiled", 9, 0, 0, old)]
        kept = summary.newest_per_subject(its)
        self.assertEqual(sorted((i.subject, i.run) for i in kept), [("mma", 9), ("tiled", 9)])

    def test_subjects_of_different_blocks_do_not_shadow_each_other(self):
        hw = rec("h100/2026-11-23-a/x.json", "2026-11-23T00:00:00Z")
        sim = rec("local/this-build/sim.json", "2026-11-25T00:00:00Z")
        kept = summary.newest_per_subject([item("probes", "SM80_X", 1, 0, 0, hw), item("probes", "SM80_X", 1, 0, 0, sim)])
        self.assertEqual(len(kept), 2)

    def test_red_on_failure_skip_or_missing_count(self):
        r = rec("h100/2026-11-24-b/x.json", "2026-11-24T00:00:00Z")
        row = lambda *its: summary.Row("gate", list(its))  # noqa: E731
        self.assertFalse(row(item("gate", "a", 9, 0, 0, r)).bad)
        self.assertTrue(row(item("gate", "a", 9, 0, 1, r)).bad)
        self.assertTrue(row(item("gate", "a", 9, 1, 0, r)).bad)
        self.assertTrue(row(item("gate", "a", 0, 0, 0, r)).bad)          # nothing ran
        missing = row(item("gate", "a", 9, 0, 0, r), item("gate", "b", 9, None, 0, r))
        self.assertTrue(missing.bad)
        self.assertIn("skips not recorded", summary.counts_text(missing))
        self.assertIn("b: count not recorded", summary.row_note(missing))

    def test_kill_and_rate_styles(self):
        r = rec("h100/2026-11-24-b/x.json", "2026-11-24T00:00:00Z")
        m = summary.Row("mutants", [item("mutants", "a", 1, 0, 0, r), item("mutants", "b", 1, 0, 1, r)])
        self.assertTrue(m.bad)
        self.assertEqual(summary.counts_text(m), "1 of 2 killed")
        rate = summary.Row("oracle planted bugs", [item("oracle planted bugs", "x", 100, 0, 3, r)])
        self.assertFalse(rate.bad)
        self.assertEqual(summary.counts_text(rate), "97 of 100 killed (97.0 %)")

    def test_amd_block_by_evidence_and_missing_evidence(self):
        sim = rec("local/this-build/sim.json", "2026-11-25T00:00:00Z", source="simulated")
        comp = rec("amd-compiled/2026-11-23-x/r.json", "2026-11-23T00:00:00Z", status="compiled, not run")
        rows = {"probes": summary.Row("probes", [item("probes", "GFX11_A", 1, 0, 0, sim, "amd")]),
                "compiled": summary.Row("compiled", [item("compiled", "gfx1100 u", 3, 0, 0, comp, "amd")])}
        html = summary.amd_table(rows)
        for ev in ("measured", "emulated", "compiled", "simulated", "documented"):
            self.assertIn(f"<td>{ev}</td>", html)
        self.assertEqual(html.count("no record yet"), 3)  # measured, emulated, documented
        self.assertIn("title='gfx1100'>Compiled device code (1 target)", html)


class Collect(unittest.TestCase):
    def test_blocks(self):
        recs = records.Records()
        dev = {"name": "H100", "arch": "sm_90"}
        recs.add(records.Record("mutants", {"date": "2026-11-24T00:00:00Z", "device": dev, "mutants": [
            {"name": "m1", "killed": True}, {"name": "m2", "killed": False}]}, "h100/2026-11-24-a/mutants.json", "/"))
        recs.add(records.Record("resources", {"date": "2026-11-23", "status": "compiled, not run", "kernels": [
            {"target": "gfx1100", "kernel": "k"}, {"target": "gfx90a", "kernel": "k", "traps": True}]},
            "amd-compiled/2026-11-23-x/r.json", "/"))
        blocks, problems = summary.collect(recs)
        self.assertEqual(problems, [])
        self.assertEqual(set(blocks), {"h100", "amd"})
        self.assertEqual(summary.counts_text(blocks["h100"]["mutants"]), "1 of 2 killed")
        self.assertEqual([i.subject for i in blocks["amd"]["compiled"].items], ["gfx1100"])  # the trap copy is not code


if __name__ == "__main__":
    unittest.main()
