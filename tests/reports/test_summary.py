#!/usr/bin/python3
"""The summary's rules (reports/fpreport/summary.py): the newest record of each subject wins (the
soak: the largest, with the newest beside it), a failure, a skip or a count not recorded is red and
never reads as a pass, AMD items gather in one block by evidence, and a missing kind of evidence
says so."""
import unittest

import fixtures  # noqa: F401  (puts reports/ on the path)
from fpreport import code, records, summary

# Made-up kernels and commits: no kernel's default code changed in these records (fpreport/code.py).
from fixtures import setUpModule, tearDownModule  # noqa: E402,F401
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
        kept, beside = summary.counted_per_subject(its)
        self.assertEqual(sorted((i.subject, i.run) for i in kept), [("mma", 9), ("tiled", 9)])
        self.assertEqual(beside, [])

    def test_subjects_of_different_blocks_do_not_shadow_each_other(self):
        hw = rec("h100/2026-11-23-a/x.json", "2026-11-23T00:00:00Z")
        sim = rec("local/this-build/sim.json", "2026-11-25T00:00:00Z")
        kept, _ = summary.counted_per_subject([item("probes", "SM80_X", 1, 0, 0, hw), item("probes", "SM80_X", 1, 0, 0, sim)])
        self.assertEqual(len(kept), 2)

    def test_red_on_failure_skip_or_missing_count(self):
        r = rec("h100/2026-11-24-b/x.json", "2026-11-24T00:00:00Z")
        row = lambda *its: summary.Row("gate", list(its))  # noqa: E731
        self.assertFalse(row(item("gate", "a", 9, 0, 0, r)).bad)
        self.assertTrue(row(item("gate", "a", 9, 0, 1, r)).bad)
        self.assertTrue(row(item("gate", "a", 9, 1, 0, r)).bad)
        self.assertTrue(row(item("gate", "a", 0, 0, 0, r)).bad)          # nothing ran
        # One subject that ran nothing, beside others that ran: red and named, not hidden by the total.
        zero = row(item("grid", "mma", 572, 0, 0, r), item("grid", "wgmma", 0, 0, 0, r))
        self.assertTrue(zero.bad)
        self.assertIn("wgmma: ran zero cases", summary.row_note(zero))
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


def soak(path, date, commit, cases, failures=0, skipped=0, pairs=(("mma", "f16"), ("mma", "bf16"))):
    rows = [{"kernel": k, "dtype": d, "property": "AgreesWithOracle", "cases": cases, "failures": failures,
             "shards_skipped": skipped} for k, d in pairs]
    return records.Record("prop_soak", {"date": date, "commit": commit, "rows": rows}, path, "/")


def soak_row(*recs_):
    recs = records.Records()
    for r in recs_:
        recs.add(r)
    blocks, problems = summary.collect(recs)
    assert problems == [], problems
    return blocks["h100"]["soak"]


class SoakRow(unittest.TestCase):
    """The soak's row counts, per kernel x dtype x property, the current soak that ran the most cases
    (10^5 per pair at ec0c125 rather than the 2,004 of a later defaults check at fb56b67), shows its date
    and commit, and shows the newest soak beside it: never summed, red when it failed or skipped."""
    BIG = ("h100/2026-11-27-soak-ec0c125/soak-1/prop_soak.json", "2026-11-27T01:46:56Z", "ec0c125", 100008)
    SMALL = ("h100/2026-11-27-soak-fb56b67/prop_soak.json", "2026-11-27T03:12:53Z", "fb56b67", 2004)

    def test_the_largest_soak_is_counted_and_the_newest_shown_beside_it(self):
        row = soak_row(soak(*self.BIG), soak(*self.SMALL))
        self.assertEqual(summary.counts_text(row), "200,016 run · 0 skipped · 0 failed")
        self.assertEqual({i.record.commit for i in row.items}, {"ec0c125"})
        self.assertIn("ec0c125", summary.provenance(row))
        self.assertIn("2026-11-27", summary.provenance(row))
        note = summary.row_note(row)
        self.assertIn("newest 2026-11-27 · fb56b67: 4,008 run · 0 skipped · 0 failed", note)
        self.assertFalse(row.bad)
        html = summary.check_table({"soak": row})
        self.assertIn("200,016 run", html)
        self.assertIn("fb56b67", html)

    def test_a_newer_failure_or_skip_is_not_hidden_by_a_larger_pass(self):
        for fails, skips, what in ((1, 0, "2 failed"), (0, 1, "2 skipped")):  # one per pair
            small = soak(*self.SMALL, failures=fails, skipped=skips)
            row = soak_row(soak(*self.BIG), small)
            self.assertTrue(row.bad, what)
            self.assertIn("newest mma bf16 AgreesWithOracle", summary.row_note(row))
            self.assertIn(what, summary.newest_text(row))

    def test_per_pair_each_subject_takes_its_own_largest(self):
        # Two records of one soak (run in two calls) each hold part of the pairs; a later check of one
        # pair only is newest for that pair alone.
        a = soak("h100/r/soak-1/prop_soak.json", "2026-11-27T01:00:00Z", "ec0c125", 100008, pairs=(("mma", "f16"),))
        b = soak("h100/r/soak-2/prop_soak.json", "2026-11-27T02:00:00Z", "ec0c125", 100008, pairs=(("wgmma", "f16"),))
        c = soak("h100/s/prop_soak.json", "2026-11-27T03:00:00Z", "fb56b67", 2004, pairs=(("mma", "f16"),))
        row = soak_row(a, b, c)
        self.assertEqual(sorted((i.subject, i.run) for i in row.items),
                         [("mma f16 AgreesWithOracle", 100008), ("wgmma f16 AgreesWithOracle", 100008)])
        self.assertEqual([(i.subject, i.run) for i in row.newest], [("mma f16 AgreesWithOracle", 2004)])

    def test_equal_sizes_count_the_newer_and_nothing_is_shown_beside(self):
        old = soak("h100/a/prop_soak.json", "2026-11-26T00:00:00Z", "aaaaaaa", 10010, failures=1)
        new = soak("h100/b/prop_soak.json", "2026-11-27T00:00:00Z", "bbbbbbb", 10010)
        row = soak_row(old, new)
        self.assertEqual({i.record.commit for i in row.items}, {"bbbbbbb"})
        self.assertEqual(row.newest, [])
        self.assertEqual(summary.newest_text(row), "")

    def test_a_count_not_recorded_ranks_below_any_count(self):
        unknown = soak("h100/b/prop_soak.json", "2026-11-27T00:00:00Z", "bbbbbbb", None)
        row = soak_row(soak("h100/a/prop_soak.json", "2026-11-26T00:00:00Z", "aaaaaaa", 5), unknown)
        self.assertEqual({i.run for i in row.items}, {5})
        self.assertTrue(row.bad)  # the newest lacks its count: red, named
        self.assertIn("count not recorded", summary.row_note(row))

    def test_other_checks_still_count_the_newest(self):
        old = rec("h100/2026-11-23-a/x.json", "2026-11-23T00:00:00Z")
        new = rec("h100/2026-11-24-b/x.json", "2026-11-24T00:00:00Z")
        kept, beside = summary.counted_per_subject([item("grid", "mma", 900, 0, 0, old), item("grid", "mma", 9, 0, 0, new)])
        self.assertEqual([i.run for i in kept], [9])
        self.assertEqual(beside, [])

    def test_the_details_list_the_newest_as_not_counted(self):
        from fpreport import details
        row = soak_row(soak(*self.BIG), soak(*self.SMALL))
        html = details.check_details({"h100": {"soak": row}}, {})
        self.assertEqual(html.count("newest, not counted"), 2)
        self.assertEqual(html.count("2026-11-27-soak-ec0c125"), 2)


# A made-up history, oldest first: the long soak's commit, the variant's code fixed, its soak, the
# commit that made it mma's default, a later one.
HISTORY = ["ec0c125", "5733755", "974195e", "228bc76", "58a0f6c"]


def in_history(commit, ancestor):
    if commit not in HISTORY or ancestor not in HISTORY:
        return None
    return HISTORY.index(ancestor) <= HISTORY.index(commit)


class SoakCode(unittest.TestCase):
    """A soak row stands for today's code of its kernel only when it ran that code (fpreport/code.py): the
    10^5-case soak at ec0c125 ran mma's code before the fine ladder became its default (228bc76), which
    was soaked as the variant mma/classes=fine (20,004 cases at 974195e); the row counts the variant's soak
    as today's mma and never the larger soak of the earlier code."""
    BIG = ("h100/2026-11-27-soak-ec0c125/soak-1/prop_soak.json", "2026-11-27T01:46:56Z", "ec0c125", 100008)
    FINE = ("h100/2026-11-27-fine-soak-974195e/prop_soak.json", "2026-11-27T05:16:45Z", "974195e", 10002)
    FINE_PAIRS = (("mma/classes=fine", "f16"), ("mma/classes=fine", "bf16"))

    def setUp(self):
        change = code.Change("mma", "228bc76", "the fine ladder", "mma/classes=fine", "5733755")
        self.prev = code.use(code.Lineage([change], in_history))

    def tearDown(self):
        code.use(self.prev)

    def test_the_variant_soak_of_todays_code_counts_not_the_larger_soak_before_it(self):
        row = soak_row(soak(*self.BIG), soak(*self.FINE, pairs=self.FINE_PAIRS))
        self.assertEqual(sorted((i.subject, i.run, i.record.commit) for i in row.items),
                         [("mma bf16 AgreesWithOracle", 10002, "974195e"), ("mma f16 AgreesWithOracle", 10002, "974195e")])
        self.assertEqual(summary.counts_text(row), "20,004 run · 0 skipped · 0 failed")
        self.assertFalse(row.bad)
        self.assertEqual(summary.code_text(row),
                         "today's mma (since 228bc76): 20,004 cases, 2026-11-27-fine-soak-974195e (as mma/classes=fine)")
        self.assertIn(summary.code_text(row), summary.row_note(row))
        self.assertEqual(row.newest, [])  # the soak of the earlier code is not today's newest either

    def test_only_a_soak_of_the_earlier_code_is_red_and_says_so(self):
        row = soak_row(soak(*self.BIG))
        self.assertTrue(row.bad)
        self.assertIn("mma f16 AgreesWithOracle: ran mma's code before 228bc76 (the fine ladder), not today's", summary.row_note(row))
        self.assertEqual(summary.code_text(row), "")

    def test_a_soak_after_the_change_is_todays_and_the_largest_counts(self):
        later = ("h100/2026-11-28-soak-58a0f6c/prop_soak.json", "2026-11-28T00:00:00Z", "58a0f6c", 50000)
        row = soak_row(soak(*self.BIG), soak(*self.FINE, pairs=self.FINE_PAIRS), soak(*later))
        self.assertEqual({(i.run, i.record.commit) for i in row.items}, {(50000, "58a0f6c")})
        self.assertEqual(summary.code_text(row), "today's mma (since 228bc76): 100,000 cases, 2026-11-28-soak-58a0f6c")

    def test_a_commit_git_does_not_know_is_not_todays_code(self):
        row = soak_row(soak("h100/x/prop_soak.json", "2026-11-28T00:00:00Z", "fffffff", 500))
        self.assertTrue(row.bad)
        self.assertIn("which code of mma it ran is not known (commit 'fffffff'", summary.row_note(row))

    def test_the_variant_before_its_code_was_todays_stays_a_variant(self):
        early = ("h100/2026-11-27-early/prop_soak.json", "2026-11-27T00:30:00Z", "ec0c125", 300)
        row = soak_row(soak(*early, pairs=(("mma/classes=fine", "f16"),)))
        self.assertEqual([i.subject for i in row.items], ["mma/classes=fine f16 AgreesWithOracle"])
        self.assertFalse(row.bad)

    def test_other_kernels_are_untouched(self):
        row = soak_row(soak(*self.BIG, pairs=(("tiled", "f16"),)))
        self.assertEqual([(i.subject, i.run, i.stale) for i in row.items], [("tiled f16 AgreesWithOracle", 100008, "")])

    def test_a_kernel_listed_twice_is_refused(self):
        c = code.Change("mma", "228bc76", "x")
        with self.assertRaisesRegex(ValueError, "mma listed twice"):
            code.Lineage([c, c])


class RepositorySoaks(unittest.TestCase):
    """The repository's records with its kernel_code.json and git: the H100 soak row counts the soaks of
    today's mma (the variant's 20,004 cases) and of today's wgmma (the affine mask, soaked as itself at
    06a5a85), not ec0c125's 100,008 per pair of their earlier code."""

    def setUp(self):
        import os
        from fixtures import DATA, ROOT
        if not os.path.exists(os.path.join(ROOT, ".git")):
            self.skipTest("not a git checkout: which code a record ran is not known")
        self.prev = code.use(code.Lineage.load())
        from fpreport import index
        recs = records.load([DATA], allow=index.allow_current(index.parse(os.path.join(DATA, "INDEX.md"))))
        self.row = summary.collect(recs)[0]["h100-80gb-hbm3"]["soak"]

    def tearDown(self):
        code.use(self.prev)

    def test_todays_mma_and_wgmma_are_their_own_soaks(self):
        got = {(i.subject, i.record.run.split("/")[-1], i.run) for i in self.row.items
               if i.subject.split()[0] in ("mma", "wgmma") and i.subject.endswith(" AgreesWithOracle")}
        self.assertEqual(got, {("mma f16 AgreesWithOracle", "2026-11-27-soak-8959679", 10002),
                               ("mma bf16 AgreesWithOracle", "2026-11-27-soak-8959679", 10002),
                               ("wgmma f16 AgreesWithOracle", "2026-11-27-checks-06a5a85", 10002),
                               ("wgmma bf16 AgreesWithOracle", "2026-11-27-checks-06a5a85", 10002)})
        text = summary.code_text(self.row)
        self.assertIn("today's mma (since 6210843): 20,004 cases, 2026-11-27-soak-8959679 (as mma/small=c32)", text)
        self.assertIn("today's wgmma (since 2e70c62): 20,004 cases, 2026-11-27-checks-06a5a85", text)

    def test_the_lineage_names_commits_of_this_history_in_order(self):
        for c in code.current().changes.values():
            self.assertTrue(code.git_contains("HEAD", c.commit), f"{c.kernel}: {c.commit} is not in this history")
            if c.was or c.was_since:  # a change made straight in the default names no variant
                self.assertTrue(code.git_contains(c.commit, c.was_since), f"{c.kernel}: {c.was_since} is not before {c.commit}")


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
