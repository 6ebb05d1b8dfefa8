#!/usr/bin/env python3
"""The verdict of run-all's gate-plugins stage: did every subject of `flashprobe gate` end as it must?

    gate_verdict.py SUBJECTS.tsv [--record FILE]

SUBJECTS.tsv holds one line per gated subject: name, expectation, exit code, JUnit file (tab-separated).
Expectations:
  pass   the subject must hold every property: exit 0 and a JUnit file with a testcase that ran.
  killed a planted bug: exit 1 with at least one property failure that carries a shrunk case and a
         reproduction line (<failure type="failed">). A bug the gate let pass is SURVIVED; one that
         failed only as "not exercised" did not kill the bug either, nor did a run the harness could
         not carry out (<error type="device_memory">: `flashprobe gate` short of device memory).
  any    a subject under study (a vendor kernel): exit 0 or 1 is a result, reported with the failing
         properties; a crash, a usage error (exit 2) or a run where nothing was exercised is not.
  missing  the subject's library was not there (the stage writes it): always a failure.
Prints one line per subject and a summary; exits 1 when any subject did not end as it must.
--record writes the flashprobe.gpu_run/1 record the report reads (one summary row per subject).
"""
import argparse
import datetime
import json
import os
import sys
import xml.etree.ElementTree as ET


def read_junit(path):
    """(testcases run, failures with a shrunk case, not-exercised failures, harness errors) - property
    names each; a harness error (<error>, e.g. device_memory) is the gate's, not the kernel's."""
    ran, failed, not_exercised, errors = [], [], [], []
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        return None, str(e)
    for case in root.iter("testcase"):
        name = f'{case.get("classname", "")}.{case.get("name", "")}'.strip(".")
        kinds = [(f.get("type", ""), f.text or "") for f in case.findall("failure")]
        errs = [e.get("type", "error") for e in case.findall("error")]
        if case.find("skipped") is not None and not kinds and not errs:
            continue
        ran.append(name)
        errors.extend(f"{name} ({kind})" for kind in errs)
        for kind, text in kinds:
            if kind == "not_exercised":
                not_exercised.append(name)
            elif "shrunk case:" in text and "reproduce:" in text:
                failed.append(name)
            else:
                failed.append(name + " (no shrunk case)")
    return (ran, failed, not_exercised, errors), ""


def judge(name, expect, rc, junit):
    """(ok, line) for one subject."""
    if expect == "missing":
        return False, f"{name}: FAILED, its library was not built or not carried"
    facts, err = read_junit(junit) if junit else (None, "no JUnit file named")
    if facts is None:
        return False, f"{name}: FAILED, exit {rc} and no readable JUnit ({err})"
    ran, failed, not_exercised, errors = facts
    shrunk = [f for f in failed if not f.endswith("(no shrunk case)")]
    detail = (f"{len(ran)} properties reported, failed: {', '.join(failed) or 'none'}"
              + (f"; not exercised: {', '.join(not_exercised)}" if not_exercised else "")
              + (f"; not run, the harness's error: {', '.join(errors)}" if errors else ""))
    if expect == "pass":
        ok = rc == 0 and bool(ran) and not failed and not not_exercised and not errors
        return ok, f"{name}: {'held' if ok else 'FAILED'} (expected to hold; exit {rc}; {detail})"
    if expect == "killed":
        if rc == 1 and shrunk:
            return True, f"{name}: KILLED (exit 1; {detail})"
        if rc == 0:
            return False, f"{name}: SURVIVED, the planted bug passed the gate ({detail})"
        why = (f"exit {rc}" if rc != 1
               else "the harness could not run its failing properties" if errors and not failed and not not_exercised
               else "failed only as not exercised" if not failed
               else "failed without a shrunk case and reproduction line")
        return False, f"{name}: NOT KILLED, {why} ({detail})"
    if expect == "any":
        if rc in (0, 1) and ran and len(not_exercised) + len(errors) < len(ran):
            return True, f"{name}: {'held' if rc == 0 else 'properties failed'} (exit {rc}; {detail})"
        return False, f"{name}: FAILED to run (exit {rc}; {detail})"
    return False, f"{name}: unknown expectation '{expect}' (one of pass, killed, any, missing)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("subjects")
    ap.add_argument("--record", help="write a flashprobe.gpu_run/1 record here")
    a = ap.parse_args(argv)
    rows = []
    with open(a.subjects, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4 or not parts[2].lstrip("-").isdigit():
                print(f"gate_verdict: malformed line in {a.subjects}: {line!r} (name, expect, rc, junit)", file=sys.stderr)
                return 2
            rows.append((parts[0], parts[1], int(parts[2]), parts[3]))
    if not rows:
        print(f"gate-plugins: FAILED, no subject was gated ({a.subjects} is empty)")
        return 1
    summary, bad = [], 0
    for name, expect, rc, junit in rows:
        ok, line = judge(name, expect, rc, junit)
        bad += not ok
        print(line)
        summary.append({"check": "gate-plugins", "subject": name, "run": 1, "skipped": 0, "failed": int(not ok),
                        "note": line.split(": ", 1)[1]})
    print(f"gate-plugins: {len(rows)} subjects, {len(rows) - bad} as expected, {bad} not")
    if a.record:
        rec = {"schema": "flashprobe.gpu_run/1",
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "commit": os.environ.get("FLASHPROBE_COMMIT", ""), "evidence": "measured", "summary": summary}
        with open(a.record, "w", encoding="utf-8") as f:
            json.dump(rec, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
