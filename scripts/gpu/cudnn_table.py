#!/usr/bin/env python3
"""Prefill against cuDNN, from one device call (scripts/gpu/run-all vs-cudnn): issue 26's target 1.

Reads flashprobe bench records (flashprobe.bench/1: mma, wgmma and any variants timed over the
prefill and Whisper groups) and the PyTorch record of the same cases (torch_sdpa_bench.py:
torch-cudnn, torch-flash), joined by case id. The cases expected are the grid's prefill and Whisper
cases as torch_sdpa_bench.grid() spells them (the mirror of cli/bench/bench_grid.cpp): a case
that either side did not time is listed as missing, and a column with a missing case does not meet
the target (no silent pass).

Columns: "dispatched" (per case, the kernel the dispatcher picks there, as bench recorded it, timed
under its own name; missing where that kernel was not timed), "fastest" (per case, the fastest
flashprobe kernel or variant timed), then every flashprobe kernel or variant in the records, then
torch-flash. Ratio = cuDNN time / the column's time: above 1 the
column is faster. Per column: the geometric mean over the expected cases, the worst case, how many
are below the floor, and whether the target holds (geometric mean >= 1.0, none below 0.95, every
case timed, every timing a graph replay on both sides).

Order drift: where bench recorded each timing's order_position (bench --order balanced), each
flashprobe column's time against its case's geometric mean over the flashprobe columns, averaged (in
logs) per position: a kernel faster at position 0 than at 2 shows a drift within the case, which the
balanced order cancels in the geometric means but not in single cases (bench --order interleaved).

  python3 scripts/gpu/cudnn_table.py bench-vs-cudnn.json [more flashprobe records] \\
      --torch bench-torch-vs-cudnn.json [--json vs-cudnn.json] [--md vs-cudnn.md]
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "reports", "baselines"))
import torch_sdpa_bench as tsb  # noqa: E402  (imports no torch at module level)

GEOMEAN_TARGET = 1.0
FLOOR = 0.95
GROUPS = ("prefill", "whisper")


def expected_cases():
    """The case ids of the full grid's prefill and Whisper cases, in the grid's order."""
    return [tsb.case_id(c) for c in tsb.grid(False) if c["group"] in GROUPS]


def load(path):
    with open(path) as f:
        return json.load(f)


def join(fp_recs, torch_rec):
    """{case: {"times": {column: ms}, "timing": {column: "graph"|...}, "dispatched": name}}."""
    cases = {}
    for rec in fp_recs:
        for r in rec.get("results", []):
            if r.get("group") not in GROUPS or "median_ms" not in r:
                continue
            c = cases.setdefault(r["case"], {"times": {}, "timing": {}})
            c["times"][r["kernel"]] = r["median_ms"]
            c["timing"][r["kernel"]] = r.get("timing", "?")
            if r.get("dispatched"):
                c["dispatched"] = r["dispatched"]
    for r in torch_rec.get("results", []):
        if r.get("group") not in GROUPS or r.get("impl") not in ("torch-cudnn", "torch-flash"):
            continue
        c = cases.setdefault(r["case"], {"times": {}, "timing": {}})
        if "median_ms" in r:
            c["times"][r["impl"]] = r["median_ms"]
            c["timing"][r["impl"]] = r.get("timing", "?")
        else:
            c.setdefault("refused", {})[r["impl"]] = r.get("refused", "no timing")
    for c in cases.values():
        d = c.get("dispatched")
        if d and d in c["times"]:
            c["times"]["dispatched"] = c["times"][d]
            c["timing"]["dispatched"] = c["timing"][d]
        own = [k for k in c["times"] if k not in ("dispatched", "torch-cudnn", "torch-flash")]
        if own:  # the fastest flashprobe kernel or variant timed on this case (what a perfect dispatcher gets)
            k = min(own, key=lambda k: c["times"][k])
            c["times"]["fastest"], c["timing"]["fastest"], c["fastest"] = c["times"][k], c["timing"][k], k
    return cases


def order_drift(fp_recs):
    """{column: {position: {"cases": n, "offset": exp(mean log(time / the case's geomean))}}} over the
    flashprobe timings that carry order_position, cases with at least two such timings only."""
    per_case = {}
    for rec in fp_recs:
        for r in rec.get("results", []):
            if r.get("group") in GROUPS and "median_ms" in r and r.get("order_position") is not None:
                per_case.setdefault(r["case"], []).append((r["kernel"], r["order_position"], r["median_ms"]))
    logs = {}
    for rows in per_case.values():
        if len(rows) < 2:
            continue
        mean = sum(math.log(ms) for _, _, ms in rows) / len(rows)
        for k, pos, ms in rows:
            logs.setdefault(k, {}).setdefault(pos, []).append(math.log(ms) - mean)
    return {k: {p: {"cases": len(v), "offset": math.exp(sum(v) / len(v))} for p, v in sorted(by.items())}
            for k, by in logs.items()}


def columns(cases):
    cols = ["dispatched", "fastest"]
    for c in cases.values():
        for k in c["times"]:
            if k not in cols and k not in ("torch-cudnn", "torch-flash"):
                cols.append(k)
    return cols + ["torch-flash"]


def summarise(cases, expected, cols):
    """Per column: geometric mean, worst (ratio, case), below-floor cases, missing cases, target."""
    out = {}
    for col in cols:
        ratios, missing, not_graph = {}, [], []
        for case in expected:
            c = cases.get(case)
            if not c or "torch-cudnn" not in c["times"] or col not in c["times"]:
                missing.append(case)
                continue
            ratios[case] = c["times"]["torch-cudnn"] / c["times"][col]
            if c["timing"].get(col) != "graph" or c["timing"].get("torch-cudnn") != "graph":
                not_graph.append(case)
        gm = math.exp(sum(map(math.log, ratios.values())) / len(ratios)) if ratios else None
        worst = min(ratios.items(), key=lambda kv: kv[1]) if ratios else None
        below = sorted((k for k, v in ratios.items() if v < FLOOR), key=lambda k: ratios[k])
        out[col] = {"cases": len(ratios), "missing": missing, "not_graph_timed": not_graph,
                    "geomean": gm, "worst": {"case": worst[0], "ratio": worst[1]} if worst else None,
                    "below_floor": below,
                    "target_met": bool(ratios) and not missing and not not_graph and gm >= GEOMEAN_TARGET and not below,
                    "ratios": ratios}
    return out


def fmt(x, w=7):
    return f"{x:{w}.3f}" if x is not None else f"{'-':>{w}s}"


def drift_lines(drift):
    """One line per column: its time at each position over its case's mean (1.000 = the mean)."""
    return [f"{k}: " + ", ".join(f"position {p} {d['offset']:.3f} ({d['cases']} cases)" for p, d in by.items())
            for k, by in drift.items()]


def markdown(cases, expected, cols, summ, meta, drift=None):
    lines = [f"# Prefill and Whisper against cuDNN ({meta.get('device', '?')}, commit {meta.get('commit', '?')})", "",
             "Ratio = cuDNN's time / the column's time (above 1: faster than cuDNN), same device call, "
             f"medians of graph replays. Target (issue 26, 1): geometric mean >= {GEOMEAN_TARGET}, none below "
             f"{FLOOR}, every case timed.", "",
             "| column | cases | geomean | worst | worst case | below %.2f | missing | target |" % FLOOR,
             "|---|---|---|---|---|---|---|---|"]
    for col in cols:
        s = summ[col]
        w = s["worst"] or {}
        lines.append(f"| {col} | {s['cases']}/{len(expected)} | {fmt(s['geomean']).strip()} | "
                     f"{fmt(w.get('ratio')).strip()} | {w.get('case', '-')} | {len(s['below_floor'])} | "
                     f"{len(s['missing'])} | {'met' if s['target_met'] else 'not met'} |")
    lines += ["", "| case | dispatched to | cuDNN us | " + " | ".join(cols) + " |",
              "|---|---|---|" + "---|" * len(cols)]
    for case in expected:
        c = cases.get(case, {"times": {}})
        cud = c["times"].get("torch-cudnn")
        cells = [fmt(summ[col]["ratios"].get(case)).strip() for col in cols]
        lines.append(f"| {case} | {c.get('dispatched', '-')} | {cud * 1e3:.1f} | " if cud else
                     f"| {case} | {c.get('dispatched', '-')} | - | ")
        lines[-1] += " | ".join(cells) + " |"
    if drift:
        lines += ["", "Order drift (each column's time over its case's geometric mean of the flashprobe columns, by "
                  "the position it was timed at in its case; equal offsets: no drift):", ""]
        lines += [f"- {line}" for line in drift_lines(drift)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("flashprobe_json", nargs="+")
    ap.add_argument("--torch", required=True, help="torch_sdpa_bench.py's record of the same cases")
    ap.add_argument("--json", help="write the record (flashprobe.vs_cudnn/1) here")
    ap.add_argument("--md", help="write the table as Markdown here")
    a = ap.parse_args(argv)
    try:
        fp_recs = [load(p) for p in a.flashprobe_json]
        torch_rec = load(a.torch)
    except (OSError, ValueError) as e:
        print(f"cudnn_table: {e}", file=sys.stderr)
        return 2
    cases = join(fp_recs, torch_rec)
    if not any(k not in ("torch-cudnn", "torch-flash") for c in cases.values() for k in c["times"]):
        print("cudnn_table: no flashprobe prefill or Whisper timings in " + ", ".join(a.flashprobe_json),
              file=sys.stderr)
        return 2
    expected = expected_cases()
    cols = columns(cases)
    summ = summarise(cases, expected, cols)
    meta = {"commit": next((r.get("commit") for r in fp_recs if r.get("commit")), None),
            "device": (torch_rec.get("device") or {}).get("name"), "torch": torch_rec.get("torch"),
            "cudnn": torch_rec.get("cudnn")}
    print(f"{'column':24s} {'cases':>7s} {'geomean':>7s} {'worst':>7s}  {'below':>5s} {'miss':>4s}  target  worst case")
    for col in cols:
        s = summ[col]
        w = s["worst"] or {}
        print(f"{col[:24]:24s} {s['cases']:3d}/{len(expected):<3d} {fmt(s['geomean'])} {fmt(w.get('ratio'))}  "
              f"{len(s['below_floor']):5d} {len(s['missing']):4d}  {'met' if s['target_met'] else 'NOT MET':7s} "
              f"{w.get('case', '-')}")
    drift = order_drift(fp_recs)
    if drift:
        print("order drift (time over the case's mean, by position):")
        for line in drift_lines(drift):
            print("  " + line)
    rec = {"schema": "flashprobe.vs_cudnn/1", "evidence": "measured",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **meta,
           "target": {"geomean_at_least": GEOMEAN_TARGET, "none_below": FLOOR}, "expected_cases": expected,
           "columns": summ, "order_drift": drift,
           "cases": {k: {kk: vv for kk, vv in v.items()} for k, v in cases.items() if k in expected}}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rec, f, indent=1)
    if a.md:
        with open(a.md, "w") as f:
            f.write(markdown(cases, expected, cols, summ, meta, drift))
    return 0


if __name__ == "__main__":
    sys.exit(main())
