#!/usr/bin/env python3
"""How much of the DRAM traffic a kernel leaves on its critical path, from bench records.

On the prefill grid (batch x S = 16384) every shape moves the same bytes (Q, K, V and O once: 268 MB
at d 64 and 128, 90 us at 3 TB/s) and has the same row blocks per SM, while the work grows with S.
Per implementation, head dim, mask and dtype this fits, by least squares over S <= --fit-max-s,
    time = a * tiles_per_sm + K
(tiles_per_sm: 128 x 128 tiles computed, nm^2 per head without a mask, nm (nm + 1) / 2 causal, over
the SMs). K, the time that does not grow with S, holds everything paid once per row block or per
call: in the row-block model (row_block_model.py) it is x = K / (a * row blocks per SM). Compared
with the DRAM time of the group's bytes (bytes / --bw): K near the DRAM time means the traffic runs
beside no products; K well below it means it overlaps them (kernels/src/wgmma/WGMMA_NOTES.md,
"Where the fixed cost goes").

  python3 scripts/gpu/dram_overlap.py bench-flashprobe.json bench-torch.json [--bw 3.0e12] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys

CASE = re.compile(r"^prefill:b(\d+)_hq(\d+)_hkv\d+_sq(\d+)_sk(\d+)_d(\d+)_(f16|bf16)(_causal)?$")


def points_of(recs):
    """{(impl, d, causal, dtype): [(s, tiles_per_sm, time_us, bytes)]} from bench records."""
    out = {}
    for rec in recs:
        sms = (rec.get("device") or {}).get("multiprocessors")
        for r in rec.get("results", []):
            m = CASE.match(r.get("case", ""))
            if not m or "median_ms" not in r or "bytes" not in r:
                continue
            if not sms:
                raise ValueError(f"{r['case']}: the record names no device multiprocessor count")
            b, h, s, d, dtype, causal = int(m[1]), int(m[2]), int(m[3]), int(m[5]), m[6], bool(m[7])
            nm = -(-s // 128)
            tiles = b * h * (nm * (nm + 1) // 2 if causal else nm * nm)
            impl = r["kernel"] if r.get("impl") == "flashprobe" else r.get("impl")
            out.setdefault((impl, d, causal, dtype), []).append((s, tiles / sms, r["median_ms"] * 1e3, r["bytes"]))
    return out


def line(pts):
    """Least squares time = a * tiles + K over pts [(s, tiles, time, bytes)] -> (a, K)."""
    n = len(pts)
    sx = sum(p[1] for p in pts)
    sy = sum(p[2] for p in pts)
    sxx = sum(p[1] ** 2 for p in pts)
    sxy = sum(p[1] * p[2] for p in pts)
    den = n * sxx - sx * sx
    if n < 2 or den == 0:
        raise ValueError("a line needs two different sequence lengths")
    a = (n * sxy - sx * sy) / den
    return a, (sy - a * sx) / n


def fits(points, bw, fit_max_s):
    rows = []
    for (impl, d, causal, dtype), pts in sorted(points.items(), key=lambda kv: tuple(map(str, kv[0]))):
        use = sorted(p for p in pts if p[0] <= fit_max_s)
        if len(use) < 3:
            continue
        a, k = line(use)
        dram_us = max(p[3] for p in use) / bw * 1e6
        rows.append({"impl": impl, "d": d, "causal": causal, "dtype": dtype, "us_per_tile": a, "intercept_us": k,
                     "dram_us": dram_us, "intercept_over_dram": k / dram_us,
                     "residual_us": {p[0]: p[2] - (a * p[1] + k) for p in sorted(pts)}})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+", help="flashprobe bench and torch_sdpa_bench.py records")
    ap.add_argument("--bw", type=float, default=3.0e12, help="DRAM bytes per second (default 3.0e12, an H100's)")
    ap.add_argument("--fit-max-s", type=int, default=4096, help="fit over S up to this (default 4096)")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    if a.bw <= 0 or a.fit_max_s < 512:
        print(f"dram_overlap: --bw {a.bw:g} must be > 0 and --fit-max-s {a.fit_max_s} at least 512", file=sys.stderr)
        return 2
    try:
        recs = []
        for path in a.records:
            with open(path) as f:
                recs.append(json.load(f))
        rows = fits(points_of(recs), a.bw, a.fit_max_s)
    except (OSError, ValueError) as e:
        print(f"dram_overlap: {e}", file=sys.stderr)
        return 2
    if not rows:
        print("dram_overlap: no group with three prefill lengths up to --fit-max-s", file=sys.stderr)
        return 2
    print(f"time = a * tiles per SM + K over S <= {a.fit_max_s}; DRAM = the bytes at {a.bw / 1e12:g} TB/s")
    print(f"{'impl':16s} {'group':18s} {'us/tile':>7s} {'K us':>6s} {'DRAM us':>7s} {'K/DRAM':>6s}  residuals by S (us)")
    for r in rows:
        g = f"d{r['d']} {'causal' if r['causal'] else 'full'} {r['dtype']}"
        res = " ".join(f"{s}:{v:+.0f}" for s, v in r["residual_us"].items())
        print(f"{r['impl'][:16]:16s} {g:18s} {r['us_per_tile']:7.3f} {r['intercept_us']:6.1f} {r['dram_us']:7.1f} "
              f"{r['intercept_over_dram']:6.2f}  {res}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "flashprobe.dram_overlap/1", "bw": a.bw, "fit_max_s": a.fit_max_s, "rows": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
