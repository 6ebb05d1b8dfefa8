#!/usr/bin/env python3
"""Decode's split count against cuDNN, from one device call (scripts/gpu/run-all decode-splits).

Reads the flashprobe bench record (the shipped "decode" and its "decode/splits=<n>" variants timed on
scripts/gpu/sweeps/decode_splits.json) and the PyTorch record of the same problems (torch-cudnn,
torch-flash), joined by case id. Prints, per case, the planned split count (decode_splits(), recorded
by bench as "planned_splits"), its time, every forced count's time relative to cuDNN, and the best
count; then, per shape (heads, kv heads, head dim), Sk and dtype, the one count that serves every batch size best (the split count may
not depend on the batch: decode_splits' BatchInvariant property), judged by the worst ratio over the
batch sizes. Other decode variants in the record (decode/fused=on, ...: batch invariant by
themselves) get a table of their own: per case the ratio to cuDNN and to the shipped decode, per
(shape, Sk, dtype) the worst cuDNN ratio over the batches. Ratios are cuDNN time / flashprobe time: above 1
flashprobe is faster.

  python3 scripts/gpu/decode_splits_table.py bench-decode-splits.json bench-torch-decode-splits.json \
      [--json summary.json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys

SPLITS = re.compile(r"^decode/splits=(\d+)$")


def load(path):
    with open(path) as f:
        return json.load(f)


def table(fp_rec, torch_rec):
    """{case: {"planned": n, "decode": ms, "splits": {n: ms}, "cudnn": ms, "flash": ms, "problem": {...}}}"""
    cases = {}
    for r in fp_rec.get("results", []):
        c = cases.setdefault(r["case"], {"splits": {}, "variants": {}})
        c["problem"] = r.get("problem")
        if r["kernel"] == "decode":
            c["decode"] = r["median_ms"]
            if "planned_splits" in r:
                c["planned"] = r["planned_splits"]
        elif m := SPLITS.match(r["kernel"]):
            c["splits"][int(m.group(1))] = r["median_ms"]
        elif r["kernel"].startswith("decode/"):
            c["variants"][r["kernel"]] = r["median_ms"]
    for r in torch_rec.get("results", []):
        if r["case"] in cases and r["impl"] in ("torch-cudnn", "torch-flash"):
            cases[r["case"]][r["impl"].split("-", 1)[1]] = r["median_ms"]
    return cases


def shape_of(p):
    """'h32/8 d128' (query heads / kv heads, head dim; dv when it differs): cases of one shape share a plan."""
    d, dv = p.get("d"), p.get("dv", p.get("d"))
    return f"h{p.get('hq')}/{p.get('hkv')} d{d}" + (f"/{dv}" if dv != d else "")


def batch_invariant_choice(cases):
    """Per (shape, sk, dtype): the forced split count whose worst cuDNN ratio over the batch sizes is highest."""
    groups = {}
    for c in cases.values():
        p = c.get("problem") or {}
        if "cudnn" not in c or not c["splits"]:
            continue
        groups.setdefault((shape_of(p), p.get("sk"), p.get("dtype")), []).append(c)
    out = []
    for (shape, sk, dtype), cs in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][2]), kv[0][1] or 0)):
        common = set.intersection(*(set(c["splits"]) for c in cs))
        if not common:
            continue
        worst = {n: min(c["cudnn"] / c["splits"][n] for c in cs) for n in common}
        best = max(sorted(common), key=lambda n: worst[n])
        planned = {c.get("planned") for c in cs}
        row = {"shape": shape, "sk": sk, "dtype": dtype, "batches": sorted((c["problem"] or {}).get("batch") for c in cs),
               "best_splits": best, "worst_ratio_at_best": worst[best],
               "planned_splits": sorted(x for x in planned if x is not None),
               "worst_ratio_planned": min(c["cudnn"] / c["decode"] for c in cs if "decode" in c)
               if all("decode" in c for c in cs) else None}
        out.append(row)
    return out


def variant_rows(cases):
    """Per (variant, shape, sk, dtype): the worst cuDNN ratio over the batch sizes and the worst ratio to decode."""
    groups = {}
    for c in cases.values():
        p = c.get("problem") or {}
        for v, ms in c["variants"].items():
            if "cudnn" in c:
                groups.setdefault((v, shape_of(p), p.get("sk"), p.get("dtype")), []).append(
                    (p.get("batch"), c["cudnn"] / ms, c["decode"] / ms if "decode" in c else None))
    out = []
    for (v, shape, sk, dtype), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][3]), kv[0][2] or 0)):
        vs_dec = [d for _, _, d in rs if d is not None]
        out.append({"variant": v, "shape": shape, "sk": sk, "dtype": dtype, "batches": sorted(b for b, _, _ in rs),
                    "cudnn_ratio_by_batch": {str(b): r for b, r, _ in sorted(rs, key=lambda x: x[0] or 0)},
                    "worst_cudnn_ratio": min(r for _, r, _ in rs),
                    "worst_ratio_to_decode": min(vs_dec) if len(vs_dec) == len(rs) else None})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("flashprobe_json")
    ap.add_argument("torch_json")
    ap.add_argument("--json", help="write the summary here")
    a = ap.parse_args(argv)
    cases = table(load(a.flashprobe_json), load(a.torch_json))
    if not cases:
        print("decode_splits_table: no flashprobe results", file=sys.stderr)
        return 2
    print(f"{'case':44s} {'plan':>4s} {'decode us':>9s} {'cuDNN us':>9s} {'flash us':>9s} {'cuDNN/dec':>9s} "
          f"{'best n':>6s} {'best us':>8s} {'cuDNN/best':>10s}  cuDNN/forced by splits")
    per_case = []
    for case, c in sorted(cases.items(), key=lambda kv: (shape_of(kv[1].get("problem") or {}),
                                                          (kv[1].get("problem") or {}).get("dtype", ""),
                                                          (kv[1].get("problem") or {}).get("batch", 0),
                                                          (kv[1].get("problem") or {}).get("sk", 0))):
        best = min(c["splits"], key=lambda n: c["splits"][n]) if c["splits"] else None
        cud = c.get("cudnn")
        fmt = lambda ms: f"{ms * 1e3:9.1f}" if ms is not None else f"{'-':>9s}"  # noqa: E731
        ratio = lambda ms: f"{cud / ms:.3f}" if cud and ms else "-"  # noqa: E731
        forced = " ".join(f"{n}:{ratio(t)}" for n, t in sorted(c["splits"].items()))
        print(f"{case[:44]:44s} {c.get('planned', '-')!s:>4s} {fmt(c.get('decode'))} {fmt(cud)} {fmt(c.get('flash'))} "
              f"{ratio(c.get('decode')):>9s} {best if best is not None else '-'!s:>6s} "
              f"{fmt(c['splits'].get(best)) if best is not None else '-':>8s} "
              f"{ratio(c['splits'].get(best)) if best is not None else '-':>10s}  {forced}")
        per_case.append({"case": case, **{k: v for k, v in c.items() if k != "problem"},
                         "splits": {str(n): t for n, t in sorted(c["splits"].items())}, "best_splits": best})
    choice = batch_invariant_choice(cases)
    if choice:
        print("\nOne split count for every batch size (BatchInvariant), per shape, Sk and dtype: the worst cuDNN "
              "ratio over the batches")
        for r in choice:
            wp = r["worst_ratio_planned"]
            planned = f"; planned {r['planned_splits']} (worst {wp:.3f})" if wp is not None else ""
            print(f"  {r['shape']:12s} sk {r['sk']:6d} {r['dtype']:4s} batches {r['batches']}: best {r['best_splits']:3d} splits "
                  f"(worst {r['worst_ratio_at_best']:.3f}){planned}")
    variants = variant_rows(cases)
    if variants:
        print("\nDecode variants (batch invariant by themselves), per shape, Sk and dtype: cuDNN/variant by batch, "
              "the worst, and the worst decode/variant")
        for r in variants:
            by_batch = " ".join(f"b{b}:{x:.3f}" for b, x in r["cudnn_ratio_by_batch"].items())
            wd = r["worst_ratio_to_decode"]
            head = f"  {r['variant']:32s} {r['shape']:12s} sk {r['sk']:6d} {r['dtype']:4s} {by_batch}"
            print(f"{head}  worst {r['worst_cudnn_ratio']:.3f}" + (f"  vs decode {wd:.3f}" if wd is not None else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "flashprobe.decode_splits/1", "cases": per_case, "batch_invariant": choice,
                       "variants": variants}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
