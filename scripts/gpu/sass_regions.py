#!/usr/bin/env python3
"""Where a kernel's instructions and time go, from Nsight Compute's per-instruction SASS page
(`run-all profile` with FLASHPROBE_PROFILE_SOURCE=1 writes it as ncu-src-<kernel>-<case>.csv).

Code that runs once per row block and warp, once per key tile, once per item ... executes a
different number of times: the page's lines are cut into regions of equal execution count (lines
never executed join the region they sit in), and each region prints its count, its instructions, its
share of the executed instructions and of the warp-state samples (a warp's share of time) and its
main stall reasons. With --unit N (e.g. row blocks x consumer warps) every region also prints its
instructions per unit, and the total per unit: the figures WGMMA_NOTES.md compares between kernels.

  python3 scripts/gpu/sass_regions.py ncu-src-wgmma-d64_causal_s512.csv --unit 32768
  python3 scripts/gpu/sass_regions.py A.csv B.csv --opcodes MUFU,FADD,HGMMA

Exit 2 with a message naming the file or value on bad input.
"""
import argparse
import csv
import re
import sys
from collections import Counter

EXEC = "Instructions Executed"
SAMPLES = "Warp Stall Sampling (All Samples)"
SOURCE = "Source"


def fail(msg):
    print(f"sass_regions: {msg}", file=sys.stderr)
    sys.exit(2)


def read_page(path):
    """(kernel name, [(source, executed, samples, {stall: samples})]) of one SASS page."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")
    hdr_at = next((i for i, r in enumerate(rows[:5]) if EXEC in r and SOURCE in r), None)
    if hdr_at is None:
        fail(f"{path}: no '{EXEC}' and '{SOURCE}' columns in the first lines: not an ncu --page source --csv file")
    hdr = rows[hdr_at]
    ix = {h: i for i, h in enumerate(hdr)}
    name = rows[0][1] if hdr_at > 0 and len(rows[0]) > 1 else ""
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    lines = []
    for n, r in enumerate(rows[hdr_at + 1:], start=hdr_at + 2):
        if len(r) < len(hdr):
            continue
        try:
            ex = int(r[ix[EXEC]] or 0)
            sa = int(r[ix[SAMPLES]] or 0) if SAMPLES in ix else 0
            st = {h[len("stall_"):]: int(r[ix[h]] or 0) for h in stalls}
        except ValueError:
            fail(f"{path}:{n}: a count that is not a whole number")
        lines.append((r[ix[SOURCE]].strip(), ex, sa, st))
    if not lines:
        fail(f"{path}: no instruction lines")
    return name, lines


def regions(lines):
    """[(first, last, count, lines executed)] in page order."""
    out = []
    for i, (_, ex, _, _) in enumerate(lines):
        if ex == 0 or (out and out[-1][2] == ex):
            if out:
                out[-1][1] = i
                out[-1][3] += ex > 0
            continue
        out.append([i, i, ex, 1])
    return [tuple(r) for r in out]


def opcode(src):
    m = re.match(r"(?:@!?U?P\w+\s+)?([A-Z0-9_]+)", src)
    return m.group(1) if m else src


def report(path, unit, min_share, opcodes):
    name, lines = read_page(path)
    tot_ex = sum(x[1] for x in lines)
    tot_sa = sum(x[2] for x in lines) or 1
    print(f"== {path}" + (f" ({name[:100]})" if name else ""))
    head = f"executed warp instructions {tot_ex:,}, samples {tot_sa:,}"
    if unit:
        head += f", per unit ({unit:,}) {tot_ex / unit:,.1f}"
    print(head)
    print(f"{'lines':>13} {'count':>9} {'instr':>6} {'exec %':>7} {'samp %':>7}" + (f" {'/unit':>8}" if unit else "") + "  stalls")
    for a, b, cnt, n in regions(lines):
        seg = lines[a:b + 1]
        ex = sum(x[1] for x in seg)
        sa = sum(x[2] for x in seg)
        if sa / tot_sa * 100 < min_share and ex / max(tot_ex, 1) * 100 < min_share:
            continue
        st = Counter()
        for x in seg:
            st.update(x[3])
        top = " ".join(f"{k} {v / tot_sa * 100:.1f}" for k, v in st.most_common(3) if v > 0)
        row = f"{a:>6}-{b:<6} {cnt:>9} {n:>6} {ex / max(tot_ex, 1) * 100:>7.1f} {sa / tot_sa * 100:>7.1f}"
        if unit:
            row += f" {ex / unit:>8.1f}"
        print(row + "  " + top)
    if opcodes:
        ops, sam = Counter(), Counter()
        for src, ex, sa, _ in lines:
            ops[opcode(src)] += ex
            sam[opcode(src)] += sa
        print("opcodes: " + ", ".join(f"{o} {ops[o]:,} ({sam[o] / tot_sa * 100:.1f} % samples)" for o in opcodes))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="+", help="ncu --page source --csv --print-source sass files")
    ap.add_argument("--unit", type=int, default=0, help="divide executed counts by this (e.g. row blocks x consumer warps)")
    ap.add_argument("--min-share", type=float, default=0.4, help="hide regions below this %% of both instructions and samples")
    ap.add_argument("--opcodes", default="", help="comma-separated opcodes to total (MUFU,FADD,...)")
    a = ap.parse_args(argv)
    if a.unit < 0:
        fail(f"--unit {a.unit}: must be a positive count (or 0 for none)")
    if a.min_share < 0:
        fail(f"--min-share {a.min_share}: must be >= 0")
    ops = [o for o in a.opcodes.split(",") if o]
    for p in a.pages:
        report(p, a.unit, a.min_share, ops)


if __name__ == "__main__":
    main()
