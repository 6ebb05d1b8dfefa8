#!/usr/bin/env python3
"""Prints bench records (flashprobe.bench/1, from flashprobe bench or torch_sdpa_bench.py) side by
side: one row per case, one column per implementation (impl/kernel), TFLOP/s for prefill and
whisper cases, GB/s for decode. Usage: bench_table.py [--summary] FILE.json [FILE.json ...]

--summary: instead, per implementation, the geometric mean (and range) of its ratio to the first
column over the prefill cases with S >= 2048, per head dim, causal or not (the issue's target range)."""
import json
import math
import re
import sys


def label(r):
    return r["kernel"] if r.get("impl") == "flashprobe" else r.get("impl", "?")


def summary(cols, rows):
    ref, groups = cols[0], {}
    for case in rows:
        m = re.match(r"prefill:.*_sq(\d+)_.*_d(\d+)_(?:f16|bf16)(_causal)?$", case)
        if m and int(m.group(1)) >= 2048:
            groups.setdefault((int(m.group(2)), bool(m.group(3))), []).append(case)
    print(f"ratio to {ref}, prefill S >= 2048: geometric mean [min-max]")
    for c in cols:
        if not any(c in rows[k] for cases in groups.values() for k in cases):
            continue  # no prefill case (decode)
        cells = []
        for (d, causal), cases in sorted(groups.items()):
            rs = [rows[k][c] / rows[k][ref] for k in cases if c in rows[k] and ref in rows[k]]
            gm = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else float("nan")
            cells.append(f"d{d}{'c' if causal else ' '} {gm:.3f} [{min(rs, default=0):.2f}-{max(rs, default=0):.2f}]")
        print(f"{c:18s}" + "  ".join(cells))


def main():
    args = sys.argv[1:]
    as_summary = "--summary" in args
    args = [a for a in args if a != "--summary"]
    cols, rows = [], {}
    for path in args:
        try:
            with open(path) as f:
                rec = json.load(f)
        except (OSError, ValueError) as e:
            print(f"bench_table: {path}: {e}", file=sys.stderr)
            continue
        for r in rec.get("results", []):
            c = label(r)
            if c not in cols:
                cols.append(c)
            metric = r["gbps"] if r.get("group") == "decode" else r["tflops"]
            rows.setdefault(r["case"], {})[c] = metric
    if not rows:
        print("bench_table: no records")
        return 1
    if as_summary:
        summary(cols, rows)
        return 0
    width = max(len(c) for c in cols) + 1
    print(f"{'case':52s}" + "".join(f"{c:>{width}s}" for c in cols))
    for case, vals in rows.items():
        print(f"{case[:52]:52s}" + "".join(f"{vals[c]:{width}.0f}" if c in vals else " " * (width - 1) + "-" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
