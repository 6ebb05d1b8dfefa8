#!/usr/bin/env python3
"""Prints bench records (flashprobe.bench/1, from flashprobe bench or torch_sdpa_bench.py) side by
side: one row per case, one column per implementation (impl/kernel), TFLOP/s for prefill and
whisper cases, GB/s for decode. Usage: bench_table.py FILE.json [FILE.json ...]"""
import json
import sys


def label(r):
    return r["kernel"] if r.get("impl") == "flashprobe" else r.get("impl", "?")


def main():
    cols, rows = [], {}
    for path in sys.argv[1:]:
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
    width = max(len(c) for c in cols) + 1
    print(f"{'case':52s}" + "".join(f"{c:>{width}s}" for c in cols))
    for case, vals in rows.items():
        print(f"{case[:52]:52s}" + "".join(f"{vals[c]:{width}.0f}" if c in vals else " " * (width - 1) + "-" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
