#!/usr/bin/env python3
"""The AMD resource catalogue as a Markdown table, from the flashprobe.resources/1 records that the
amd_check_* tests write (build/off/amd/resources_*.json, or a committed copy under
reports/data/amd-compiled/).

    tools/amd_resource_catalogue.py reports/data/amd-compiled/<record>/ [--kernels mma tiled atoms]

One row per kernel instantiation and target, except where the kernel is only a trap (its matrix
instruction does not exist on that target: a trap and no matrix instruction): wave, VGPR, AGPR, SGPR, LDS, scratch, waves per SIMD
and the limiting resource. Before printing, every kernel of every record must be a real build's:
no call left (device libraries resolved and inlined) and no dynamic stack; otherwise it names them
and exits 1. Exit 2: no records in the folder, or a record that is not flashprobe.resources/1.
"""
import argparse
import glob
import json
import os
import re
import sys

MMA = re.compile(r"mma_fwdINS_5atoms\d+(\w+?)ENS1_\d+(F16|BF16)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELb([01])E")
MMA_BWD = re.compile(r"amd_bwd_(dkdv|dq)INS_5atoms\d+(\w+?)ENS1_\d+(F16|BF16)ELi(\d+)E")
TILED = re.compile(r"tiled_fwdILi(\d+)ENS1_\d+(F16|BF16)ELNS0_3BugE0E")
ATOM = re.compile(r"atom_experimentsIN10flashprobe5atoms\d+(\w+?)(?:ILb([01])E)?EEEv")


def label(kind, name):
    """A readable label for the kernels this catalogue lists, or None."""
    if kind == "mma":
        m = MMA.search(name)
        if m:
            atom, dtype, d, waves, bn, _mt, extras = m.groups()
            ext = "" if extras == "1" else ", no extras"
            return f"mma d={d} {dtype.lower()} ({atom}, {waves} waves, {bn}-key tiles{ext})"
        m = MMA_BWD.search(name)
        if m:
            part, atom, dtype, d = m.groups()
            return f"mma_bwd_amd {'dK/dV' if part == 'dkdv' else 'dQ'} d={d} {dtype.lower()} ({atom})"
    if kind == "tiled":
        m = TILED.search(name)
        if m:
            return f"tiled d={m.group(1)} {m.group(2).lower()}"
    if kind == "atoms":
        m = ATOM.search(name)
        if m:
            atom, hi = m.groups()
            return f"probe {atom}" + ("" if hi is None else ("_HI" if hi == "1" else "_LO"))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--kernels", nargs="+", default=["mma", "tiled", "atoms"], choices=["mma", "tiled", "atoms"])
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.folder, "resources_*.json")))
    if not files:
        print(f"{a.folder}: no resources_*.json records", file=sys.stderr)
        return 2
    kernels, unresolved, commits = [], [], set()
    for f in files:
        r = json.load(open(f))
        if r.get("schema") != "flashprobe.resources/1":
            print(f"{f}: schema {r.get('schema')!r}, expected flashprobe.resources/1", file=sys.stderr)
            return 2
        commits.add(r.get("commit"))
        for k in r["kernels"]:
            kernels.append(k)
            if k.get("calls", 1) != 0 or k.get("dynamic_stack", True):
                unresolved.append(f"{k['target']} {k['kernel']}: calls {k.get('calls')}, dynamic stack {k.get('dynamic_stack')}")
    if unresolved:
        print(f"{len(unresolved)} kernel(s) not from a build with every call resolved:", file=sys.stderr)
        for u in unresolved:
            print("  " + u, file=sys.stderr)
        return 1
    print(f"<!-- {len(files)} records, {len(kernels)} kernels x targets, every one with 0 calls and no dynamic "
          f"stack; commit(s) {', '.join(sorted(c or '?' for c in commits))} -->")
    print("| target | kernel | wave | VGPR | AGPR | SGPR | LDS B | scratch B | waves/SIMD | limited by |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for k in kernels:
        if k.get("traps") and not k.get("matrix_instructions"):
            continue  # the trap path of a target without the instruction
        for kind in a.kernels:
            text = label(kind, k["kernel"])
            if text:
                rows.append((k["target"], a.kernels.index(kind), text, k))
                break
    for target, _, text, k in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        print(f"| {target} | {text} | {k['wave_size']} | {k['vgpr']} | {k['agpr']} | {k['sgpr']} | {k['lds_bytes']} | "
              f"{k['scratch_bytes']} | {k['waves_per_simd']} | {k['occupancy_limited_by']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
