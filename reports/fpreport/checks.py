"""What each record kind says about the checks: record -> Items (run / skipped / failed counts).

The summary counts nothing itself: each record kind has a reader here that turns one record into
Items, one per subject (a kernel, an atom, a tool, a mutant), and the summary keeps, per device,
check and subject, the Item of the newest record (of the largest for a check whose Check.pick is
"largest": the soak; summary.counted_per_subject). A count the record does not carry is None, and the summary shows it
as "not recorded" in red: a check whose skips were not recorded is never shown as passed.

A new record kind joins the summary in one of two ways (reports/README.md, "Summary contract"):
  - the record carries "summary": [{"check", "subject", "run", "skipped", "failed", "unit", "note"}]
    (read by generic_items, no change here), or
  - a reader registered here with @reader("<kind>").
"""
import dataclasses, re

from . import code as kernel_code
from .records import Record

@dataclasses.dataclass
class Check:
    title: str
    unit: str
    style: str = "pass"  # pass: run / skipped / failed, red on any failure or skip or a count not
                         # recorded; kill: killed of total, red on a survivor; rate: killed of
                         # total as a rate (a statistical measurement, never red)
    pick: str = "newest"  # which record of a subject the summary counts (summary.counted_per_subject):
                          # newest: the newest; largest: the one that ran the most cases (the soak:
                          # 10^5 cases are stronger evidence than a later 2,000-case check, which is
                          # shown beside them and keeps the row red if it failed or skipped)


# The checks in the order the summary shows them; a check named only by a record's "summary" array
# is shown after these with its own name as the title.
CHECKS = {
    "probes": Check("Layout probes", "atoms"),
    "tests": Check("GPU tests", "tests"),
    "grid": Check("Kernel grid vs oracle", "cases"),
    "gate": Check("Property gate", "kernel x property"),
    "soak": Check("Property soak", "cases", pick="largest"),
    "mutants": Check("Mutants", "mutants", "kill"),
    "sanitizers": Check("Sanitizers", "tool runs"),
    "crosscheck": Check("PyTorch outputs vs oracle", "cases"),
    "torch": Check("PyTorch kernels via the Python package", "cases"),
    "oracle": Check("Correct kernels", "runs"),
    "oracle planted bugs": Check("Planted bugs", "observable cases", "rate"),
    "compiled": Check("Compiled device code", "kernels"),
    "documented": Check("Documented layouts", "atoms"),
}


def check_of(name):
    return CHECKS.get(name) or Check(name, "")


def anchor(name):
    """The id of a check's details in the report."""
    return "check-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@dataclasses.dataclass
class Item:
    check: str
    subject: str
    run: object          # int or None (not recorded)
    skipped: object      # int or None
    failed: object       # int or None
    record: Record
    note: str = ""
    vendor: str = ""     # "amd" or "nvidia" where the subject belongs to one, else ""
    unit: str = ""
    evidence: str = ""   # overrides the record's label (a simulated record's documented layouts)
    stale: str = ""      # why the item does not stand for today's code of its subject (a soak of a kernel's
                         # earlier code, code.Lineage): never counted as today's, red where nothing newer is
    code: str = ""       # the code it stands for where a kernel's default changed ("mma since 228bc76")

    @property
    def label(self):
        return self.evidence or self.record.evidence


READERS = {}


def reader(kind):
    def wrap(fn):
        READERS[kind] = fn
        return fn
    return wrap


def items_of(rec):
    """Every Item a record yields: its own "summary" array, else its kind's reader, else none."""
    if isinstance(rec.data.get("summary"), list):
        return generic_items(rec)
    fn = READERS.get(rec.kind)
    return list(fn(rec)) if fn else []


def _count(v, what, rec):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{rec.path}: summary {what} = {v!r} is not a count (a non-negative integer or null)")
    return v


def generic_items(rec):
    out = []
    for i, s in enumerate(rec.data["summary"]):
        if not isinstance(s, dict) or not isinstance(s.get("check"), str) or not s.get("check"):
            raise ValueError(f"{rec.path}: summary[{i}] needs a \"check\" name")
        out.append(Item(s["check"], str(s.get("subject", "")), _count(s.get("run"), "run", rec),
                        _count(s.get("skipped"), "skipped", rec), _count(s.get("failed"), "failed", rec), rec,
                        str(s.get("note", "")), str(s.get("vendor", "")), str(s.get("unit", ""))))
    return out


def vendor_of_atom(name):
    return "amd" if re.match(r"(GFX|CDNA|RDNA)", name) else "nvidia" if re.match(r"SM\d", name) else ""


@reader("probe")
def probe_items(rec):
    """Layout probes: one Item per atom probed (failed when its verdict is not a match or a
    reconciliation), skips that are not about the architecture counted as skips."""
    d = rec.data
    atoms = d.get("atoms") if isinstance(d.get("atoms"), list) else d.get("results") if isinstance(d.get("results"), list) else [d]
    for a in atoms:
        name = a.get("atom") or a.get("name")
        if not name:
            continue
        verdict = str(a.get("verdict") or "")
        ok = a.get("ok") is True and (verdict.startswith("matches") or verdict.startswith("reconciled"))
        note = "no documented layout: derived" if verdict.startswith("reconciled") else verdict
        yield Item("probes", name, 1, 0, 0 if ok else 1, rec, note, vendor_of_atom(name))
        if a.get("expected_source") and rec.evidence == "simulated":
            yield Item("documented", name, 1, 0, 0, rec, str(a["expected_source"]), vendor_of_atom(name), evidence="documented")
    for s in d.get("skipped") or []:
        if isinstance(s, dict) and s.get("atom") and not s.get("wrong_arch"):
            if "no documented layout" in str(s.get("reason", "")):
                continue  # a simulation has nothing to simulate without a document; not a skip of a check
            yield Item("probes", s["atom"], 0, 1, 0, rec, str(s.get("reason", "")), vendor_of_atom(s["atom"]))


def _gtest_cases(j):
    for suite in j.get("testsuites", []):
        for t in suite.get("testsuite", []):
            yield suite.get("name", ""), t


def _gtest_state(t):
    if t.get("failures"):
        return "failed"
    if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
        return "skipped"
    return "run"


def _tuple_param(t):
    m = re.match(r'\("([^"]+)", "([^"]+)"\)', str(t.get("value_param", "")))
    return m.groups() if m else None


@reader("gtest")
def gtest_items(rec):
    """GoogleTest's JSON, by binary: test_kernel_props is the property gate (one Item per kernel,
    counting its properties), props-<mutant> a mutant build's property run (killed when a property
    failed), any other binary the GPU tests. soak-<x> (a long run of the property binary) is left
    to the soak's own record, which counts cases."""
    name = rec.name
    cases = list(_gtest_cases(rec.data))
    if name == "test_kernel_props":
        per = {}
        for _, t in cases:
            p = _tuple_param(t)
            k = p[0] if p else t.get("name", "?").split("/")[-1].split("_")[0]
            c = per.setdefault(k, [0, 0, 0])
            c[("run", "skipped", "failed").index(_gtest_state(t))] += 1
        for k, (r, s, f) in per.items():
            yield Item("gate", k, r + f, s, f, rec, "properties that ran zero cases: " + str(s) if s else "")
    elif name.startswith("props-"):
        failed = sum(1 for _, t in cases if _gtest_state(t) == "failed")
        ran = sum(1 for _, t in cases if _gtest_state(t) != "skipped")
        yield Item("mutants", name[len("props-"):], 1, 0, 0 if failed else 1, rec,
                   f"{failed} of {ran} properties failed" if failed else f"survived {ran} properties")
    elif name.startswith("soak-"):
        return  # a long property run whose case counts only its prop_soak record (scripts/gpu/soak) has
    else:
        states = [(_gtest_state(t), f"{suite}.{t.get('name')}") for suite, t in cases]
        odd = [f"{n} {s}" for s, n in states if s != "run"]
        count = lambda s: sum(1 for x, _ in states if x == s)  # noqa: E731
        yield Item("tests", name, count("run") + count("failed"), count("skipped"), count("failed"), rec,
                   ", ".join(odd[:3]) + (f" and {len(odd) - 3} more" if len(odd) > 3 else ""))


@reader("kernel_grid")
def grid_items(rec):
    """The kernel grid: cases run and failed per test (a kernel, or dispatch, determinism, ...).
    Cases refused by supports() are counted where the record has "refused"."""
    d = rec.data
    if d.get("test") == "mutants":
        return  # the grid's mutant cases are kills, not checks of a kernel: mutants.json counts the catalogue
    cases = d.get("cases") if isinstance(d.get("cases"), list) else []
    run = d.get("run") if isinstance(d.get("run"), int) else len(cases)
    passed = d.get("passed") if isinstance(d.get("passed"), int) else sum(1 for c in cases if c.get("pass"))
    refused = d.get("refused")
    note = f"{refused} refused by supports()" if isinstance(refused, int) else "refusals by supports() not recorded"
    yield Item("grid", str(d.get("test") or "?"), run, 0, run - passed, rec, note)


@reader("prop_soak")
def soak_items(rec):
    for row in rec.data.get("rows", []):
        skipped = row.get("shards_skipped")  # shards; older records say skipped or not for the row
        if not isinstance(skipped, int):
            skipped = 1 if row.get("skipped") else 0 if row.get("skipped") is False else None
        short = ""
        if isinstance(row.get("asked"), int) and isinstance(row.get("cases"), int) and row["cases"] < row["asked"]:
            short = f"ran {row['cases']} of {row['asked']} asked"
        if skipped and row.get("skip_reasons"):
            short = "; ".join([short] * bool(short) + row["skip_reasons"])
        # A path of the kernel (a tile class, a decode plan) that ran no case is a part not exercised: a skip.
        empty = row.get("paths_without_cases") or []
        if empty:
            skipped = (skipped or 0) + len(empty)
            short = "; ".join([short] * bool(short) + [f"no case in {', '.join(empty)}"])
        # The runner (the case arena, the soak's default, or the per-case runner) is how the cases reached the
        # GPU, not what was checked: a kernel x dtype x property is one subject whichever ran it, so the
        # summary counts one soak of each pair (the largest, CHECKS["soak"].pick), and the runner is in the note.
        runner = rec.data.get("runner")
        how = {"arena": "case arena", "per-case": "per-case runner"}.get(runner, f"{runner} runner" if runner else "")
        # The code it ran (code.py): a variant that is now a kernel's default code counts for the kernel, a
        # kernel's earlier code never for today's.
        ran = kernel_code.current().ran(str(row.get("kernel")), rec.commit)
        yield Item("soak", f"{ran.kernel} {row.get('dtype')} {row.get('property')}", row.get("cases"), skipped,
                   row.get("failures"), rec, "; ".join(x for x in (ran.stale, ran.via, short, how) if x),
                   stale=ran.stale, code=ran.code)


@reader("mutants")
def mutant_items(rec):
    for m in rec.data.get("mutants", []):
        after = f" after {m['cases']} cases" if isinstance(m.get("cases"), int) and m.get("killed") else ""
        yield Item("mutants", str(m.get("name")), 1, 0, 0 if m.get("killed") else 1, rec,
                   f"killed by {m.get('killed_by')}{after}" if m.get("killed") else "survived")


@reader("sanitizer")
def sanitizer_items(rec):
    d = rec.data
    if d["errors"] is None:
        yield Item("sanitizers", d["tool"], 1, 0, None, rec, "no summary line: the tool did not finish")
    elif d["expect_errors"]:  # a planted race: the tool must find it
        yield Item("sanitizers", d["tool"], 1, 0, 0 if d["errors"] > 0 else 1, rec,
                   f"planted race found ({d['errors']} hazards)" if d["errors"] else "planted race NOT found")
    else:
        yield Item("sanitizers", d["tool"], 1, 0, 1 if d["errors"] else 0, rec, f"{d['errors']} errors")


@reader("crosscheck")
def crosscheck_items(rec):
    d = rec.data
    for b, s in (d.get("backends") or {}).items():
        failed = s.get("failed")
        # Cases the backend refused were never produced: not a skip of the oracle's check.
        yield Item("crosscheck", f"torch-{b}", s.get("ran"), 0, len(failed) if isinstance(failed, list) else failed,
                   rec, f"{s.get('refused')} cases refused by the backend" if s.get("refused") else "")
    f64 = d.get("float64_agreement")
    if isinstance(f64, dict):
        yield Item("crosscheck", "oracle vs torch float64", f64.get("cases"), 0,
                   (f64.get("cases") or 0) - (f64.get("agree") or 0), rec, f"max rel {f64.get('max_rel', 0):.1e}")


@reader("torch_props")
def torch_props_items(rec):
    """PyTorch's attention kernels property-tested through the Python package (torch_props.py): one Item per
    subject and dtype (the empty-rows runs apart), the cases checked as run; a failing case and each crash
    of the subject as failed; a run that checked no case as skipped (never passed). Refused cases (outside
    the backend's API) are in the note, with a run cut short of its target."""
    env = rec.data.get("environment") or {}
    for row in rec.data.get("runs") or []:
        subject = f"{row.get('subject')} {row.get('dtype')}" + (" empty rows" if row.get("empty_rows") else "")
        checked = row.get("checked")
        failed = (row.get("crashed") or 0) + (1 if row.get("failure") else 0)
        if row.get("failed") and not failed:
            failed = 1  # failed without a recorded case: the worker or the subject died
        notes = [f"torch {env.get('torch', '?')}"]
        if row.get("refused"):
            notes.append(f"{row['refused']} refused")
        if row.get("crashed"):
            notes.append(f"{row['crashed']} crashed" + (f", {row['skipped_after_crash']} of their graph classes not run"
                                                          if row.get("skipped_after_crash") else ""))
        if isinstance(checked, int) and isinstance(row.get("target"), int) and checked < row["target"]:
            notes.append(f"{checked} of {row['target']}: {row.get('stopped_by')}")
        yield Item("torch", subject, checked, 1 if checked == 0 and not failed else 0, failed, rec, "; ".join(notes),
                   "nvidia" if env.get("cuda") else "")


@reader("resources")
def resource_items(rec):
    """Compiled AMD code: one Item per target, kernels that hold their matrix instruction there."""
    per = {}
    for k in rec.data.get("kernels", []):
        if k.get("traps"):
            continue  # a wrong-target copy that only traps
        t = k.get("target", "?")
        c = per.setdefault(t, [0, 0])
        c[0] += 1
        if k.get("scratch_bytes"):
            c[1] += 1
    for t, (n, spill) in per.items():
        yield Item("compiled", f"{t} {rec.data.get('unit', '')}".strip(), n, 0, 0, rec,
                   f"{spill} with scratch" if spill else "", "amd" if t.startswith("gfx") else "")


@reader("calibration")
def calibration_items(rec):
    """The tolerance model on the CPU: correct simulated kernels never fail, planted bugs die."""
    d = rec.data
    yield Item("oracle", "correct kernels (false failures)", d.get("defaults_correct_runs"), 0,
               d.get("defaults_false_failures"), rec, f"{len(d.get('correct_kernels') or [])} simulated kernels")
    for b in d.get("planted_bugs") or []:
        obs, killed = b.get("observable"), b.get("killed")
        yield Item("oracle planted bugs", str(b.get("name")), obs, 0,
                   obs - killed if isinstance(obs, int) and isinstance(killed, int) else None, rec,
                   f"{b.get('not_observable', 0)} cases where the bug changes nothing")


MUTANT_PREFIX = "mutant/"  # test_mutation's ledger rows (tests/proptests/test_mutation.cpp)
THROUGHPUT_DIR = re.compile(r"throughput-\d+")  # scripts/gpu/run-all's throughput stage, one folder per size


@reader("prop_throughput")
def ledger_items(rec):
    """The property gate's ledger: one row per kernel x property with its status (passed, failed,
    skipped). Ledgers written before rows had a status are left to GoogleTest's JSON of the same run,
    which records the skipped tests. Rows of mutant builds (test_mutation writes the same ledger: run-all's
    mutation stage puts it in its own results/mutation/ folder; records before that have it in place of
    the gate's) are the mutants check's, never the gate's. The ledgers of run-all's throughput stage
    (its throughput-<size>/ folders: AgreesWithOracle alone, 200 cases per kernel, to time the gate)
    measure speed, not the gate: newest per kernel, their one property would stand for the gate's
    ten in the summary."""
    rows = rec.data.get("rows") or []
    if not rows or any("status" not in r for r in rows):
        return
    if any(THROUGHPUT_DIR.fullmatch(part) for part in rec.path.split("/")[:-1]):
        return
    per = {}
    for r in rows:
        if str(r.get("kernel", "")).startswith(MUTANT_PREFIX):
            continue  # test_mutation's runs: a mutant's failed property is a kill, counted by mutants.json
        c = per.setdefault(r.get("kernel", "?"), [0, 0, 0, []])
        st = r["status"]
        if st == "skipped":
            c[1] += 1
            c[3].append(f"{r.get('property')}: {r.get('reason', 'skipped')}")
        else:
            c[0] += 1
            c[2] += st != "passed"
    for k, (run, skipped, failed, why) in per.items():
        yield Item("gate", k, run, skipped, failed, rec, "; ".join(why[:2]) + (f"; +{len(why) - 2}" if len(why) > 2 else ""))


PLANTED_BUG_PREFIX = "bug/"  # the planted-bug plug-ins' names (plugin/subjects/planted_bugs.cu)


@reader("gate")
def gate_run_items(rec):
    """`flashprobe gate --json` (schema flashprobe.gate/1): one Item per subject (a kernel, or "plugin
    <name>"), counting its properties: run (passed or failed), skipped (not exercised: zero cases ran,
    never a pass), failed (a failure, or a property not exercised that the user did not allow).
    The project's planted-bug plug-ins ("bug/<name>", plugin/subjects/planted_bugs.cu, and their
    control "bug/none") are left to the gate-plugins check, which judges each as killed or held:
    here a planted bug's failure read as the gate failing."""
    per = {}
    for r in rec.data.get("rows") or []:
        kind = r.get("kind", "kernel")
        if kind == "plugin" and str(r.get("subject", "")).startswith(PLANTED_BUG_PREFIX):
            continue
        subject = str(r.get("subject", "?")) if kind == "kernel" else f"{kind} {r.get('subject', '?')}"
        c = per.setdefault(subject, [0, 0, 0, []])
        st = r.get("status")
        not_ex = st == "not_exercised"
        fails = st == "failed" or (not_ex and not r.get("allowed"))
        c[1 if not_ex else 0] += 1
        c[2] += fails
        if not_ex:
            c[3].append(f"{r.get('property')} not exercised{' (allowed)' if r.get('allowed') else ''}: {r.get('reason', '')}"[:160])
        elif fails:
            c[3].append(f"{r.get('property')} failed")
    for s, (run, skipped, failed, why) in per.items():
        yield Item("gate", s, run, skipped, failed, rec, "; ".join(why[:2]) + (f"; +{len(why) - 2}" if len(why) > 2 else ""))
