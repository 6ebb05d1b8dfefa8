#!/usr/bin/env python3
"""Sums the shards of scripts/gpu/soak into one record (flashprobe.prop_soak/1) and a line per
kernel x dtype. A shard counts the cases RapidCheck reports as passed ("OK, passed N tests"); a shard
that failed contributes its counterexample and reproduction line; one that timed out or crashed is
a failure too. Exit 1 when anything failed or a kernel x dtype has fewer cases than asked.

usage: soak_summary.py SOAKDIR OUT.json PROPERTY CASES PER_SHARD JOBS T0 T1
"""
import datetime
import json
import os
import re
import sys
from collections import OrderedDict


def shard_result(path):
    log = open(os.path.join(path, "log.txt"), errors="replace").read()
    rc = int(open(os.path.join(path, "rc")).read().strip() or -1)
    t0, t1 = (float(x) for x in open(os.path.join(path, "span")).read().split())
    if rc == 125 and not log:  # not started: the call's deadline came first
        return {"passed": 0, "skipped": False, "not_run": True, "failure": None, "start": t0, "end": t1,
                "ledger": {}, "header": None}
    m = re.search(r"^OK, passed (\d+) tests", log, re.M)
    passed = int(m.group(1)) if m else 0
    skipped = "[  SKIPPED ]" in log and rc == 0
    failure = None
    if rc != 0 or (not m and not skipped):
        fals = re.search(r"^Falsifiable after (\d+) tests?(?: and (\d+) shrinks?)?", log, re.M)
        repro = re.search(r'RC_PARAMS="reproduce=[^"]+"', log)
        case = re.search(r"^case \S+", log, re.M)
        failure = {"rc": rc,
                   "why": "timed out" if rc == 124 else ("property falsified" if fals else "crashed or errored"),
                   "falsified_after": int(fals.group(1)) if fals else None,
                   "shrinks": int(fals.group(2)) if fals and fals.group(2) else None,
                   "case": case.group(0) if case else None,
                   "reproduce": repro.group(0) if repro else None,
                   "log_tail": log[-1500:]}
        if fals:  # the cases before the counterexample passed
            passed = int(fals.group(1)) - 1
    ledger = {}
    tp = os.path.join(path, "prop_throughput.json")
    header = None
    if os.path.exists(tp):
        rec = json.load(open(tp))
        header = {k: rec.get(k) for k in ("tool_version", "commit", "backend", "device", "host")}
        for row in rec.get("rows", []):
            for key, v in row.items():
                if key.endswith("_s") or key == "seconds":
                    ledger[key] = ledger.get(key, 0.0) + v
    return {"passed": passed, "skipped": skipped, "not_run": False, "failure": failure, "start": t0, "end": t1,
            "ledger": ledger, "header": header}


def main():
    soak, out, prop, cases, per, jobs, t0, t1 = sys.argv[1:9]
    cases, per, jobs, t0, t1 = int(cases), int(per), int(jobs), float(t0), float(t1)
    plan = [line.split() for line in open(os.path.join(soak, "plan.txt")) if line.strip()]
    combos = OrderedDict()
    header = None
    for k, dt, s, seed in plan:
        r = shard_result(os.path.join(soak, f"{k}-{dt}-{s}"))
        r["seed"] = int(seed)
        header = header or r["header"]
        combos.setdefault((k, dt), []).append(r)
    rows, failures, bad = [], [], False
    for (k, dt), shards in combos.items():
        passed = sum(r["passed"] for r in shards)
        skipped = all(r["skipped"] for r in shards)
        not_run = sum(r["not_run"] for r in shards)
        fails = [dict(r["failure"], seed=r["seed"], kernel=k, dtype=dt) for r in shards if r["failure"]]
        failures += fails
        wall = max(r["end"] for r in shards) - min(r["start"] for r in shards)
        busy = sum(r["end"] - r["start"] for r in shards)
        ledger = {}
        for r in shards:
            for key, v in r["ledger"].items():
                ledger[key] = ledger.get(key, 0.0) + v
        short = not skipped and passed < cases
        bad = bad or bool(fails) or short
        rows.append({"kernel": k, "dtype": dt, "property": prop, "cases": passed, "asked": cases,
                     "skipped": skipped, "failures": len(fails), "shards": len(shards), "shards_not_run": not_run,
                     "wall_s": round(wall, 3), "process_s": round(busy, 3),
                     "cases_per_process_s": round(passed / busy, 2) if busy > 0 else None,
                     "ledger_s": {key: round(v, 3) for key, v in ledger.items()}})
        state = "skipped (kernel takes no such dtype)" if skipped else (
            f"{len(fails)} FAILED" if fails else (f"SHORT ({not_run} shards not run)" if short else "ok"))
        print(f"soak {k}/{dt}/{prop}: {passed} cases, {len(fails)} failures, {len(shards)} shards, "
              f"{busy:.0f} process-s ({passed / busy if busy else 0:.1f} cases/process-s): {state}")
    total = sum(r["cases"] for r in rows)
    rec = {"schema": "flashprobe.prop_soak/1", "tool": "scripts/gpu/soak",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": os.environ.get("FLASHPROBE_COMMIT") or (header or {}).get("commit"),
           **{k: v for k, v in (header or {}).items() if k != "commit"},
           "property": prop, "cases_per_kernel_dtype": cases, "cases_per_shard": per, "jobs": jobs,
           "wall_s": round(t1 - t0, 3), "total_cases": total,
           "cases_per_s": round(total / (t1 - t0), 2) if t1 > t0 else None,
           "rows": rows, "failures": failures}
    json.dump(rec, open(out, "w"), indent=1)
    print(f"soak: {total} cases in {t1 - t0:.0f} s ({total / max(t1 - t0, 1e-9):.0f} cases/s over {jobs} processes), "
          f"{len(failures)} failures -> {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
