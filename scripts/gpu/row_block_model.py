#!/usr/bin/env python3
"""A fixed cost per row block, fitted to bench records: where the gap to cuDNN comes from, per shape.

Model (kernels/src/wgmma/WGMMA_NOTES.md, "Against cuDNN"): a 128-row block that visits t key tiles
costs (t + x) tile times, so over the prefill grid (batch x S = 16384, nm = S / 128 row blocks per
head) the rate is
    without a mask   R * nm / (nm + x)
    causal           R * nm / (nm + 1 + 2 x)      (row block m visits m + 1 tiles, the useful work
                                                   is nm^2 / 2 tiles, the diagonal's half wasted)
R is the rate with no fixed cost (long sequences), x the fixed cost in tile times. Fitted per
implementation, head dim, mask and dtype over S 512-16384 (least squares on log rates, x on a grid
of 0.05). Then per shape: the measured ratio to cuDNN and its two factors,
    per-tile    R_impl / R_cudnn
    fixed cost  (nm + x_cudnn) / (nm + x_impl)        (causal: nm + 1 + 2x)
and what the ratio would be with cuDNN's fixed cost (x_impl = x_cudnn), or with x_impl reduced by
--dx tiles (a change's prediction).

  python3 scripts/gpu/row_block_model.py bench-flashprobe.json bench-torch.json [--impl wgmma] [--dx 1.5]
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys

CASE = re.compile(r"^prefill:b(\d+)_hq(\d+)_hkv\d+_sq(\d+)_sk(\d+)_d(\d+)_(f16|bf16)(_causal)?$")


def shape(nm, causal, x):
    return nm / (nm + 1 + 2 * x) if causal else nm / (nm + x)


def fit(points, causal):
    """points: [(nm, tflops)] -> (x, R, rms of log residuals)."""
    best = None
    for i in range(-20, 301):
        x = i * 0.05
        if any((nm + 1 + 2 * x if causal else nm + x) <= 0 for nm, _ in points):
            continue
        logs = [math.log(v / shape(nm, causal, x)) for nm, v in points]
        lr = sum(logs) / len(logs)
        err = sum((l - lr) ** 2 for l in logs)
        if best is None or err < best[0] - 1e-15:
            best = (err, x, math.exp(lr))
    err, x, r = best
    return x, r, math.sqrt(err / len(points))


def load_rates(paths):
    """{impl: {case: tflops}} over the prefill cases of these bench record files."""
    recs = []
    for path in paths:
        with open(path) as f:
            recs.append(json.load(f))
    return load_rates_from(recs)


def load_rates_from(recs):
    """{impl: {case: tflops}} over the prefill cases of these bench records (flashprobe's by kernel)."""
    rates = {}
    for rec in recs:
        for r in rec.get("results", []):
            if r.get("group") != "prefill" or "tflops" not in r:
                continue
            impl = r["kernel"] if r.get("impl") == "flashprobe" else r.get("impl")
            rates.setdefault(impl, {})[r["case"]] = r["tflops"]
    return rates


def groups_of(cases):
    """{(d, causal, dtype): [(case, nm)]}"""
    g = {}
    for c in cases:
        m = CASE.match(c)
        if not m:
            continue
        sq, d, dtype, causal = int(m.group(3)), int(m.group(5)), m.group(6), bool(m.group(7))
        g.setdefault((d, causal, dtype), []).append((c, sq / 128))
    return g


def model(rates, impl, ref="torch-cudnn", dx=0.0):
    fits, rows = {}, []
    for (d, causal, dtype), cases in sorted(groups_of(rates.get(impl, {})).items()):
        have = [(c, nm) for c, nm in cases if c in rates.get(ref, {})]
        if len(have) < 3:
            continue
        xi, ri, ei = fit([(nm, rates[impl][c]) for c, nm in have], causal)
        xr, rr, er = fit([(nm, rates[ref][c]) for c, nm in have], causal)
        fits[(d, causal, dtype)] = {"impl": {"x": xi, "R": ri, "rms": ei}, "ref": {"x": xr, "R": rr, "rms": er}}
        for c, nm in sorted(have, key=lambda t: t[1]):
            measured = rates[impl][c] / rates[ref][c]
            per_tile = ri / rr
            fixed = shape(nm, causal, xi) / shape(nm, causal, xr)
            rows.append({"case": c, "d": d, "causal": causal, "dtype": dtype, "s": int(nm * 128), "measured": measured,
                         "model": per_tile * fixed, "per_tile": per_tile, "fixed": fixed,
                         "with_ref_fixed_cost": per_tile,
                         "with_dx": per_tile * shape(nm, causal, xi - dx) / shape(nm, causal, xr)})
    return fits, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+", help="flashprobe bench and torch_sdpa_bench.py records")
    ap.add_argument("--impl", default="wgmma")
    ap.add_argument("--ref", default="torch-cudnn")
    ap.add_argument("--dx", type=float, default=0.0, help="a change's predicted cut of the fixed cost, in tile times")
    ap.add_argument("--json", help="write fits and rows here")
    a = ap.parse_args(argv)
    try:
        rates = load_rates(a.records)
    except (OSError, ValueError) as e:
        print(f"row_block_model: {e}", file=sys.stderr)
        return 2
    for who in (a.impl, a.ref):
        if who not in rates:
            print(f"row_block_model: no prefill timings of '{who}' (have: {', '.join(sorted(rates)) or 'none'})",
                  file=sys.stderr)
            return 2
    fits, rows = model(rates, a.impl, a.ref, a.dx)
    print(f"fixed cost per 128-row block (x, tile times) and rate without it (R, TFLOP/s): {a.impl} vs {a.ref}")
    for (d, causal, dtype), f in fits.items():
        i, r = f["impl"], f["ref"]
        print(f"  d{d:<3d} {'causal' if causal else 'full  '} {dtype:4s}  {a.impl}: x {i['x']:5.2f} R {i['R']:5.0f} "
              f"(rms {i['rms']:.3f})   {a.ref}: x {r['x']:5.2f} R {r['R']:5.0f} (rms {r['rms']:.3f})")
    print(f"\n{'case':52s} {'measured':>8s} {'model':>6s} {'per-tile':>8s} {'fixed':>6s}  "
          f"{'at ref x':>8s} {'x-' + format(a.dx, 'g'):>7s}")
    for r in rows:
        print(f"{r['case'][:52]:52s} {r['measured']:8.3f} {r['model']:6.3f} {r['per_tile']:8.3f} {r['fixed']:6.3f}  "
              f"{r['with_ref_fixed_cost']:8.3f} {r['with_dx']:7.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "flashprobe.row_block_model/1", "impl": a.impl, "ref": a.ref, "dx": a.dx,
                       "fits": [{"d": d, "causal": c, "dtype": t, **v} for (d, c, t), v in fits.items()], "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
