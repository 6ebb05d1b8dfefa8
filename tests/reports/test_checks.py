#!/usr/bin/python3
"""The record readers (reports/fpreport/checks.py, records.py): what each record kind counts as run,
skipped and failed, the evidence labels, and the generic summary array. Records are written to a
temporary folder in the layout reports/data uses and loaded through records.load, as the report does."""
import gzip, json, os, tempfile, unittest

import fixtures  # noqa: F401  (puts reports/ on the path)
from fpreport import checks, records

# Made-up kernels and commits: no kernel's default code changed in these records (fpreport/code.py).
from fixtures import setUpModule, tearDownModule  # noqa: E402,F401

DEV = {"name": "Test GPU", "arch": "sm_90", "vendor": "nvidia", "driver_version": 13000, "runtime_version": 13000}


def header(kind, **kw):
    return {"schema": f"flashprobe.{kind}/1", "commit": "abc1234def", "date": "2026-11-24T10:00:00Z", "device": DEV} | kw


def gtest(tests):
    """GoogleTest's JSON for [(name, value_param or None, state)], state in run / skipped / failed."""
    cases = []
    for name, param, state in tests:
        t = {"name": name, "status": "RUN", "result": "SKIPPED" if state == "skipped" else "COMPLETED"}
        if param:
            t["value_param"] = param
        if state == "failed":
            t["failures"] = [{"failure": "boom"}]
        cases.append(t)
    return {"tests": len(cases), "timestamp": "2026-11-24T11:00:00Z", "testsuites": [{"name": "S", "testsuite": cases}]}


class Readers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = os.path.join(self.tmp.name, "dev", "2026-11-24-x")
        os.makedirs(self.run)

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, name, obj, text=None):
        p = os.path.join(self.run, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if name.endswith(".gz"):
            with gzip.open(p, "wt") as f:
                json.dump(obj, f)
        else:
            with open(p, "w") as f:
                f.write(text if text is not None else json.dumps(obj))

    def items(self):
        recs = records.load([self.tmp.name])
        return [i for rs in recs.by_kind.values() for r in rs for i in checks.items_of(r)]

    def test_property_gate_counts_skips_per_kernel(self):
        self.put("gtest-test_kernel_props.json", gtest(
            [("Holds/mma_A", '("mma", "A")', "run"), ("Holds/mma_B", '("mma", "B")', "failed"),
             ("Holds/decode_A", '("decode", "A")', "skipped"), ("Holds/decode_B", '("decode", "B")', "skipped")]))
        got = {i.subject: (i.check, i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"mma": ("gate", 2, 0, 1), "decode": ("gate", 0, 2, 0)})

    def test_gate_ledger_with_status(self):
        rows = [{"kernel": "mma", "property": "A", "status": "passed", "cases": 150},
                {"kernel": "mma", "property": "B", "status": "failed", "cases": 3},
                {"kernel": "decode", "property": "A", "status": "skipped", "reason": "refuses sm_90", "cases": 0}]
        self.put("prop_throughput.json", header("prop_throughput", rows=rows, summary={"run": 2, "skipped": 1, "failed": 1}))
        got = {i.subject: (i.check, i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"mma": ("gate", 2, 0, 1), "decode": ("gate", 0, 1, 0)})

    def test_gate_command_record_counts_not_exercised_as_skipped_and_unallowed_as_failed(self):
        rows = [{"subject": "mma", "kind": "kernel", "property": "A", "status": "passed", "cases_run": 100},
                {"subject": "mma", "kind": "kernel", "property": "B", "status": "failed", "cases_run": 3},
                {"subject": "naive", "kind": "plugin", "property": "A", "status": "passed", "cases_run": 100},
                {"subject": "naive", "kind": "plugin", "property": "W", "status": "not_exercised", "cause": "refused",
                 "allowed": True, "reason": "supports() refused every generated problem"},
                {"subject": "naive", "kind": "plugin", "property": "L", "status": "not_exercised", "cause": "budget",
                 "allowed": False, "reason": "the time budget was spent before its first case"}]
        self.put("gate.json", header("gate", rows=rows, totals={"run": 3, "not_exercised": 2}))
        got = {i.subject: (i.check, i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"mma": ("gate", 2, 0, 1), "plugin naive": ("gate", 1, 2, 1)})
        [naive] = [i for i in self.items() if i.subject == "plugin naive"]
        self.assertIn("W not exercised (allowed)", naive.note)
        self.assertIn("L not exercised: the time budget", naive.note)

    def test_planted_bug_plugins_are_left_to_the_gate_plugins_check(self):
        # A planted bug failing is the gate working: counted in the "gate" row it read as a red gate
        # (the H200's Property gate row: 74 failed, all of them planted bugs and their budget).
        rows = [{"subject": "bug/scale_twice", "kind": "plugin", "property": "A", "status": "failed", "cases_run": 2},
                {"subject": "bug/none", "kind": "plugin", "property": "A", "status": "passed", "cases_run": 100},
                {"subject": "mine", "kind": "plugin", "property": "A", "status": "failed", "cases_run": 2},
                {"subject": "bug/x", "kind": "kernel", "property": "A", "status": "failed", "cases_run": 2}]
        self.put("gate.json", header("gate", rows=rows, totals={"run": 4, "not_exercised": 0}))
        got = {i.subject: (i.check, i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"plugin mine": ("gate", 1, 0, 1), "bug/x": ("gate", 1, 0, 1)})

    def test_gate_ledger_leaves_mutant_runs_to_the_mutants_check(self):
        # run-all's mutation stage rewrites the ledger with the mutants' runs (2026-11-26-gate-ada6362's
        # prop_throughput.json): read as the gate, their kills were 16 red "failed" properties.
        rows = [{"kernel": "mutant/causal_top_left", "property": "A", "status": "failed", "cases": 3},
                {"kernel": "mutant/gqa_mod", "property": "A", "status": "passed", "cases": 100},
                {"kernel": "mma", "property": "A", "status": "passed", "cases": 150}]
        self.put("prop_throughput.json", header("prop_throughput", rows=rows))
        got = {i.subject: (i.check, i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"mma": ("gate", 1, 0, 0)})

    def test_throughput_ledgers_are_not_the_gate(self):
        # run-all's throughput stage times AgreesWithOracle alone (throughput-100/, throughput-400/ of
        # 2026-11-27-throughput-ec0c125): newest per kernel, its one property stood for the gate's ten.
        rows = [{"kernel": "mma", "property": "AgreesWithOracle", "status": "passed", "cases": 200}]
        self.put("throughput-100/prop_throughput.json", header("prop_throughput", rows=rows))
        self.put("throughput-400/prop_throughput.json", header("prop_throughput", rows=rows))
        self.assertEqual(self.items(), [])
        self.put("throughput-of-a-kind/prop_throughput.json", header("prop_throughput", rows=rows))
        self.assertEqual([(i.check, i.subject, i.run) for i in self.items()], [("gate", "mma", 1)])

    def test_gate_ledger_without_status_leaves_it_to_gtest(self):
        self.put("prop_throughput.json", header("prop_throughput", rows=[{"kernel": "mma", "property": "A", "cases": 150}]))
        self.assertEqual(self.items(), [])

    def test_gtest_without_date_takes_its_runs(self):
        self.put("gtest-test_cli.json", gtest([("A", None, "run"), ("B", None, "skipped")]) | {"timestamp": None})
        self.put("bench.json", header("bench", results=[]))
        [it] = self.items()
        self.assertEqual((it.check, it.subject, it.run, it.skipped, it.failed), ("tests", "test_cli", 1, 1, 0))
        self.assertIn("S.B skipped", it.note)
        self.assertEqual((it.record.day, it.record.commit), ("2026-11-24", "abc1234"))

    def test_mutant_property_run_is_killed_when_a_property_failed(self):
        self.put("extra/gtest-props-rescale-l.json", gtest([("Holds/mma_A", None, "failed"), ("Holds/mma_B", None, "run")]))
        self.put("extra/gtest-props-skip-lo.json", gtest([("Holds/mma_A", None, "run")]))
        got = {i.subject: (i.check, i.run, i.failed) for i in self.items()}
        self.assertEqual(got, {"rescale-l": ("mutants", 1, 0), "skip-lo": ("mutants", 1, 1)})

    def test_grid_reads_gzip_and_counts_failures(self):
        cases = [{"kernel": "mma", "pass": True}, {"kernel": "mma", "pass": False}, {"kernel": "mma", "pass": True}]
        self.put("kernel_grid_mma.json.gz", header("kernel_grid", test="mma", run=3, passed=2, cases=cases))
        self.put("kernel_grid_mutants.json", header("kernel_grid", test="mutants", run=1, passed=1, cases=cases[:1]))
        [it] = self.items()
        self.assertEqual((it.check, it.subject, it.run, it.failed), ("grid", "mma", 3, 1))
        self.assertIn("not recorded", it.note)

    def test_sanitizer_summary_lines(self):
        self.put("sanitize-memcheck.txt", None, "[  PASSED  ] 2 tests.\n========= ERROR SUMMARY: 0 errors\n")
        self.put("sanitize-racecheck.txt", None, "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n")
        self.put("sanitize-racecheck-mutant.txt", None, "========= RACECHECK SUMMARY: 4 hazards displayed (4 errors, 0 warnings)\n")
        self.put("sanitize-synccheck.txt", None, "killed by the time limit\n")
        got = {i.subject: i.failed for i in self.items()}
        self.assertEqual(got, {"memcheck": 0, "racecheck": 1, "racecheck-mutant": 0, "synccheck": None})

    def test_a_run_of_text_records_alone_takes_date_and_commit_from_its_folder(self):
        # compute-sanitizer writes text only: without the folder's name the summary row had no date
        # and no commit (the H200's sanitize-1db8b6d run).
        named = os.path.join(self.tmp.name, "dev", "2026-11-26-sanitize-1db8b6d")
        os.makedirs(named)
        with open(os.path.join(named, "sanitize-memcheck.txt"), "w") as f:
            f.write("========= ERROR SUMMARY: 0 errors\n")
        self.put("sanitize-memcheck.txt", None, "========= ERROR SUMMARY: 0 errors\n")  # 2026-11-24-x: no commit
        recs = records.load([self.tmp.name])
        got = {r.run: (r.day, r.commit) for r in recs.of("sanitizer")}
        self.assertEqual(got, {"dev/2026-11-26-sanitize-1db8b6d": ("2026-11-26", "1db8b6d"),
                               "dev/2026-11-24-x": ("2026-11-24", "")})

    def test_soak_rows(self):
        rows = [{"kernel": "mma", "dtype": "f16", "property": "P", "cases": 9000, "asked": 10000, "skipped": False, "failures": 0},
                {"kernel": "decode", "dtype": "f16", "property": "P", "cases": 0, "asked": 10000, "skipped": True, "failures": 0},
                {"kernel": "tiled", "dtype": "f16", "property": "P", "cases": 10000, "failures": 1}]
        self.put("prop_soak.json", header("prop_soak", rows=rows))
        got = {i.subject: (i.run, i.skipped, i.failed, i.note) for i in self.items()}
        self.assertEqual(got["mma f16 P"], (9000, 0, 0, "ran 9000 of 10000 asked"))
        self.assertEqual(got["decode f16 P"][1], 1)
        self.assertIsNone(got["tiled f16 P"][1])  # skips not recorded

    def test_a_path_without_cases_is_a_skip_named_in_the_note(self):
        rows = [{"kernel": "wgmma", "dtype": "f16", "property": "P", "cases": 100, "asked": 100, "failures": 0,
                 "shards_skipped": 0, "paths": {"class 64/64": 100, "class 256/256": 0},
                 "paths_without_cases": ["class 256/256"]}]
        self.put("prop_soak.json", header("prop_soak", rows=rows))
        got = {i.subject: (i.run, i.skipped, i.failed, i.note) for i in self.items()}
        self.assertEqual(got["wgmma f16 P"], (100, 1, 0, "no case in class 256/256"))

    def test_the_runner_is_in_the_note_not_the_subject(self):
        # A pair soaked on the case arena and on the per-case runner is one subject (the summary counts the
        # largest soak of it); each item says which runner ran it, and the short count stays first.
        row = {"kernel": "mma", "dtype": "f16", "property": "P", "cases": 100, "asked": 100, "failures": 0}
        self.put("prop_soak.json", header("prop_soak", rows=[row], runner="per-case"))
        self.put("arena/prop_soak.json", header("prop_soak", rows=[dict(row, cases=90)], runner="arena"))
        got = sorted((i.subject, i.run, i.note) for i in self.items())
        self.assertEqual(got, [("mma f16 P", 90, "ran 90 of 100 asked; case arena"), ("mma f16 P", 100, "per-case runner")])

    def test_soak_rows_count_skipped_shards_with_their_reasons(self):
        rows = [{"kernel": "wgmma", "dtype": "f16", "property": "P", "cases": 0, "asked": 100, "skipped": True,
                 "shards_skipped": 3, "skip_reasons": ["refuses this device: arch=sm_80"], "failures": 0}]
        self.put("prop_soak.json", header("prop_soak", rows=rows))
        got = {i.subject: (i.run, i.skipped, i.failed, i.note) for i in self.items()}
        self.assertEqual(got["wgmma f16 P"], (0, 3, 0, "ran 0 of 100 asked; refuses this device: arch=sm_80"))

    def test_torch_props_rows(self):
        runs = [{"subject": "sdpa-cudnn", "dtype": "f16", "target": 1000, "checked": 1000, "refused": 80, "failed": 0,
                 "stopped_by": "target"},
                {"subject": "flex", "dtype": "bf16", "target": 1000, "checked": 600, "refused": 0, "failed": 1, "crashed": 2,
                 "stopped_by": "time budget"},
                {"subject": "sdpa-efficient", "dtype": "f32", "target": 1000, "checked": 15, "refused": 8, "failed": 1,
                 "failure": {"summary": "FAIL"}, "stopped_by": "failure"},
                {"subject": "sdpa-math", "dtype": "f16", "empty_rows": True, "target": 100, "checked": 0, "failed": 0,
                 "stopped_by": "no time left"},
                {"subject": "flex-bwd", "dtype": "f16", "target": 300, "checked": 0, "failed": 1,
                 "stopped_by": "worker exited 1 without a row"}]
        self.put("torch-props/torch_props.json", {"schema": "flashprobe.torch_props/1", "evidence": "measured",
                                                   "date": "2026-11-26T20:00:00Z",
                                                   "environment": {"torch": "2.11.0", "cuda": "13.0"}, "runs": runs})
        got = {i.subject: (i.check, i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"sdpa-cudnn f16": ("torch", 1000, 0, 0), "flex bf16": ("torch", 600, 0, 2),
                               "sdpa-efficient f32": ("torch", 15, 0, 1), "sdpa-math f16 empty rows": ("torch", 0, 1, 0),
                               "flex-bwd f16": ("torch", 0, 0, 1)})
        notes = {i.subject: i.note for i in self.items()}
        self.assertEqual(notes["sdpa-cudnn f16"], "torch 2.11.0; 80 refused")
        self.assertEqual(notes["flex bf16"], "torch 2.11.0; 2 crashed; 600 of 1000: time budget")

    def test_probe_verdicts(self):
        atoms = [{"atom": "SM80_X", "ok": True, "verdict": "matches"},
                 {"atom": "SM80_WMMA_Y", "ok": True, "verdict": "reconciled: memory paths and mma agree"},
                 {"atom": "SM80_Z", "ok": False, "verdict": "differs from the document"}]
        skipped = [{"atom": "GFX11_A", "wrong_arch": True, "reason": "needs gfx1100"},
                   {"atom": "SM90_B", "wrong_arch": False, "reason": "timed out"}]
        self.put("probes.json", header("probe", source="hardware", atoms=atoms, skipped=skipped))
        got = {i.subject: (i.run, i.skipped, i.failed) for i in self.items()}
        self.assertEqual(got, {"SM80_X": (1, 0, 0), "SM80_WMMA_Y": (1, 0, 0), "SM80_Z": (1, 0, 1), "SM90_B": (0, 1, 0)})

    def test_simulated_atoms_carry_their_document(self):
        res = [{"atom": "GFX11_WMMA_A", "ok": True, "verdict": "matches", "expected_source": "AMD RDNA3 ISA"}]
        self.put("sim.json", header("probe", source="simulated", device=None, results=res))
        got = {(i.check, i.label, i.vendor) for i in self.items()}
        self.assertEqual(got, {("probes", "simulated", "amd"), ("documented", "documented", "amd")})

    def test_generic_summary_array(self):
        self.put("fuzz.json", header("fuzz", evidence="measured", summary=[
            {"check": "fuzz", "subject": "npy", "run": 100, "skipped": 0, "failed": 0},
            {"check": "fuzz", "subject": "json", "run": 50, "skipped": None, "failed": 0}]))
        got = {i.subject: (i.check, i.run, i.skipped) for i in self.items()}
        self.assertEqual(got, {"npy": ("fuzz", 100, 0), "json": ("fuzz", 50, None)})

    def test_generic_summary_rejects_non_counts(self):
        self.put("fuzz.json", header("fuzz", summary=[{"check": "fuzz", "run": -1}]))
        with self.assertRaisesRegex(ValueError, "run = -1 is not a count"):
            self.items()
        self.put("fuzz.json", header("fuzz", summary=[{"run": 1}]))
        with self.assertRaisesRegex(ValueError, "needs a \"check\""):
            self.items()


class Evidence(unittest.TestCase):
    def test_labels(self):
        ev = records.evidence_of
        self.assertEqual(ev({"evidence": "emulated"}), "emulated")
        self.assertEqual(ev({"source": "simulated"}), "simulated")
        self.assertEqual(ev({"status": "compiled, not run"}), "compiled")
        self.assertEqual(ev({"source": "tinygrad emulator: emulated, not hardware"}), "emulated")
        self.assertEqual(ev({"device": DEV}), "measured")
        self.assertEqual(ev({}, "calibration"), "simulated")
        with self.assertRaisesRegex(ValueError, "'guessed' is not one of"):
            ev({"evidence": "guessed"})


if __name__ == "__main__":
    unittest.main()
