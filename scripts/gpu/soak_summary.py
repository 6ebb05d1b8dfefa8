#!/usr/bin/env python3
"""Sums the shards of scripts/gpu/soak into one record (flashprobe.prop_soak/1) and a line per
kernel x dtype, each with its cases run, shards skipped and failures. A shard counts the cases the
gate reports as run ("cases K/P: N run, <status>"; older binaries: RapidCheck's "OK, passed N
tests"); a shard that failed contributes its counterexample and reproduction line; one that timed out
or crashed is a failure too; a skipped shard keeps its reason ("time K/P: skipped (<reason>)").
Exit 1 when anything failed, was skipped, or a kernel x dtype has fewer cases than asked: the soak
set names the kernels and dtypes to run, so a skip is never a pass. The same when one of a kernel's
paths (its tile classes, decode's plans: the ledger rows' "paths", gate/kernel_domain.h) ran no case
over all its shards: the row names them ("paths_without_cases").

usage: soak_summary.py SOAKDIR OUT.json PROPERTY CASES PER_SHARD JOBS T0 T1 [MPS_ON MPS_HOW]
(MPS_ON 1 or 0 and MPS_HOW, scripts/gpu/mps.sh's line, go to the record's "mps"; without them it is null.)
"""
import datetime
import json
import os
import re
import sys
from collections import OrderedDict


def folder_name(kernel):
    """A shard folder's name for a kernel or variant (scripts/gpu/soak: "mma/classes=coarse" -> "mma_classes_coarse")."""
    return re.sub(r"[^A-Za-z0-9]", "_", kernel)


def shard_result(path):
    log = open(os.path.join(path, "log.txt"), errors="replace").read()
    rc = int(open(os.path.join(path, "rc")).read().strip() or -1)
    t0, t1 = (float(x) for x in open(os.path.join(path, "span")).read().split())
    if rc == 125 and not log:  # not started: the call's deadline came first
        return {"passed": 0, "skipped": False, "skip_reason": None, "not_run": True, "failure": None, "start": t0,
                "end": t1, "ledger": {}, "header": None, "runners": set(), "paths": {}}
    m = re.search(r"^cases \S+: (\d+) run, passed", log, re.M) or re.search(r"^OK, passed (\d+) tests", log, re.M)
    passed = int(m.group(1)) if m else 0
    skipped = "[  SKIPPED ]" in log and rc == 0
    why = re.search(r"^time \S+: skipped \((.*)\)$", log, re.M)
    skip_reason = (why.group(1) if why else "no reason recorded") if skipped else None
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
    ledger, runners, paths = {}, set(), {}
    tp = os.path.join(path, "prop_throughput.json")
    header = None
    if os.path.exists(tp):
        rec = json.load(open(tp))
        header = {k: rec.get(k) for k in ("tool_version", "commit", "backend", "device", "host")}
        for row in rec.get("rows", []):
            if row.get("runner"):
                runners.add(row["runner"])
            for key, v in row.items():
                if key.endswith("_s") or key == "seconds":
                    ledger[key] = ledger.get(key, 0.0) + v
            for name, n in (row.get("paths") or {}).items():
                paths[name] = paths.get(name, 0) + n
    return {"passed": passed, "skipped": skipped, "skip_reason": skip_reason, "not_run": False, "failure": failure,
            "start": t0, "end": t1, "ledger": ledger, "header": header, "runners": runners, "paths": paths}


def main():
    soak, out, prop, cases, per, jobs, t0, t1 = sys.argv[1:9]
    cases, per, jobs, t0, t1 = int(cases), int(per), int(jobs), float(t0), float(t1)
    mps = {"on": sys.argv[9] == "1", "how": sys.argv[10] if len(sys.argv) > 10 else ""} if len(sys.argv) > 9 else None
    plan = [line.split() for line in open(os.path.join(soak, "plan.txt")) if line.strip()]
    combos = OrderedDict()
    header = None
    for k, dt, s, seed in plan:
        r = shard_result(os.path.join(soak, f"{folder_name(k)}-{dt}-{s}"))
        r["seed"] = int(seed)
        header = header or r["header"]
        combos.setdefault((k, dt), []).append(r)
    rows, failures, bad = [], [], False
    for (k, dt), shards in combos.items():
        passed = sum(r["passed"] for r in shards)
        skipped_shards = sum(r["skipped"] for r in shards)
        skipped = skipped_shards == len(shards)
        reasons = sorted({r["skip_reason"] for r in shards if r["skipped"]})
        not_run = sum(r["not_run"] for r in shards)
        fails = [dict(r["failure"], seed=r["seed"], kernel=k, dtype=dt) for r in shards if r["failure"]]
        failures += fails
        wall = max(r["end"] for r in shards) - min(r["start"] for r in shards)
        busy = sum(r["end"] - r["start"] for r in shards)
        ledger = {}
        for r in shards:
            for key, v in r["ledger"].items():
                ledger[key] = ledger.get(key, 0.0) + v
        paths = {}
        for r in shards:
            for name, n in r["paths"].items():
                paths[name] = paths.get(name, 0) + n
        empty = [name for name, n in paths.items() if n == 0]
        short = passed < cases
        bad = bad or bool(fails) or short or skipped_shards > 0 or bool(empty)
        rows.append({"kernel": k, "dtype": dt, "property": prop, "cases": passed, "asked": cases,
                     "skipped": skipped, "shards_skipped": skipped_shards, "skip_reasons": reasons,
                     "failures": len(fails), "shards": len(shards), "shards_not_run": not_run,
                     "wall_s": round(wall, 3), "process_s": round(busy, 3),
                     "cases_per_process_s": round(passed / busy, 2) if busy > 0 else None,
                     "runner": "+".join(sorted(set().union(*(r["runners"] for r in shards)))) or None,
                     "ledger_s": {key: round(v, 3) for key, v in ledger.items()}})
        if paths:
            rows[-1]["paths"] = paths
            rows[-1]["paths_without_cases"] = empty
        state = (f"{len(fails)} FAILED" if fails else f"SKIPPED ({'; '.join(reasons)})" if skipped_shards
                 else f"SHORT ({not_run} shards not run)" if short
                 else f"NO CASE in {', '.join(empty)}" if empty else "ok")
        print(f"soak {k}/{dt}/{prop}: run {passed} cases, skipped {skipped_shards} of {len(shards)} shards, "
              f"failed {len(fails)}; {busy:.0f} process-s ({passed / busy if busy else 0:.1f} cases/process-s): {state}")
    total = sum(r["cases"] for r in rows)
    skipped_rows = sum(1 for r in rows if r["shards_skipped"])
    rec = {"schema": "flashprobe.prop_soak/1", "tool": "scripts/gpu/soak",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": os.environ.get("FLASHPROBE_COMMIT") or (header or {}).get("commit"),
           **{k: v for k, v in (header or {}).items() if k != "commit"},
           "property": prop, "runner": "+".join(sorted({r["runner"] for r in rows if r["runner"]})) or None,
           "mps": mps, "cases_per_kernel_dtype": cases, "cases_per_shard": per, "jobs": jobs,
           "wall_s": round(t1 - t0, 3), "total_cases": total, "rows_skipped": skipped_rows,
           "cases_per_s": round(total / (t1 - t0), 2) if t1 > t0 else None,
           "rows": rows, "failures": failures}
    json.dump(rec, open(out, "w"), indent=1)
    on = "" if mps is None else ", MPS on" if mps["on"] else ", MPS off"
    print(f"soak: run {total} cases, skipped {skipped_rows} of {len(rows)} kernel x dtype, failed {len(failures)}; "
          f"{t1 - t0:.0f} s ({total / max(t1 - t0, 1e-9):.0f} cases/s over {jobs} processes, {rec['runner'] or 'unknown'} runner{on}) -> {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
