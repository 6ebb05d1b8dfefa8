"""The AMD atoms' experiment kernels (atom_experiments<Atom>,
probes/amd/include/flashprobe/probes/amd/experiment.cuh) in the emulator, against their declared layouts.

For each atom the declared A, B and C/D layouts come from `flashprobe probe --simulate ATOM` (the
registry's layout, which the engine reproduces: verdict "matches", labels "expected"). Random small
integers (exact in every element type) fill A (M x K), B (K x N) and C (M x N); the harness writes
them into [experiment][lane][slot] by the declared layouts (replicas get their copy; no AMD atom has
ignored A or B slots), runs the kernel, and reads D back through the declared C layout: every used slot must
equal A*B + C exactly and every ignored C slot must pass C through. D = A*B cannot tell a shared
relabelling of k (observability in the probe records); everything else it checks.
"""
import json
import os
import subprocess
import tempfile
import time

import numpy as np

from . import kernarg, launch

EXPERIMENTS = 4  # one block of 4 waves: 4 independent experiments


def declared_layout(flashprobe, atom):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sim.json")
        subprocess.run([flashprobe, "probe", "--simulate", atom, "--json", path, "--no-grids"], check=True,
                       capture_output=True)
        r = json.load(open(path))["results"][0]
    if r["verdict"] != "matches" or r["labels"] != "expected":
        raise RuntimeError(f"{atom}: the simulated probe did not reproduce the declared layout ({r['verdict']})")
    return r["layout"], r["shape"] if "shape" in r else None


def table(op):
    """[lane][slot] -> (row, col) or None, from a record's operand layout."""
    t = op["table"]
    lanes, slots = op["lanes"], op["slots"]
    return [[(tuple(t[l * slots + s]) if t[l * slots + s] is not None else None) for s in range(slots)]
            for l in range(lanes)]


def kernel_pattern(atom):
    """atom_experiments<atoms::ATOM>; the OPSEL atoms are one template, ..._OPSEL<bool kHi>."""
    for half, bit in (("_HI", 1), ("_LO", 0)):
        if atom.endswith("_OPSEL" + half):
            base = atom[:-len(half)]
            return rf"atom_experiments.*5atoms{len(base)}{base}ILb{bit}E"
    return rf"atom_experiments.*5atoms{len(atom)}{atom}E"


def locate_d(mats, c, d, C):
    """Which element of A*B each used D slot received: for every used D slot (lane, slot), the (row, col)
    whose A*B value equals D - C (C as sent in that slot) in every experiment (the experiments' random
    values make it unique), else None. Returns {"located": n, "used": m, "moved": k, "by_lane": {lane:
    [(row, col) or None per slot]}}, "moved" counting the located slots that got another element than
    the declared one (an emulator that accumulates C in place but writes the products elsewhere)."""
    lanes = d.shape[1]
    by_lane, located, used, moved = {}, 0, 0, 0
    products = [am @ bm for am, bm, _ in mats]
    for l in range(lanes):
        row = []
        for s, rc in enumerate(C[l]):
            if not rc:
                row.append(None)
                continue
            used += 1
            hit = None
            for e, ab in enumerate(products):
                here = set(zip(*np.nonzero(ab == d[e, l, s] - c[e, l, s])))
                hit = here if hit is None else hit & here
            where = tuple(int(x) for x in next(iter(hit))) if hit and len(hit) == 1 else None
            located += where is not None
            moved += where is not None and where != tuple(rc)
            row.append(where)
        by_lane[l] = row
    return {"located": located, "used": used, "moved": moved, "by_lane": by_lane}


def describe_d_map(loc, C, lanes_shown):
    """The located rows of the shown lanes beside the declared ones, e.g.
    "lane 0: rows 0-15 (declared 0-3, 8-11, 16-19, 24-27)"."""
    def runs(rows):
        if any(r is None for r in rows):
            return "?"
        out, start = [], 0
        for i in range(1, len(rows) + 1):
            if i == len(rows) or rows[i] != rows[i - 1] + 1:
                out.append(f"{rows[start]}-{rows[i - 1]}" if i - 1 > start else f"{rows[start]}")
                start = i
        return ", ".join(out)
    parts = []
    for l in lanes_shown:
        got = [w[0] if w else None for w in loc["by_lane"][l]]
        want = [rc[0] if rc else None for rc in C[l]]
        parts.append(f"lane {l}: rows {runs(got)} (declared {runs(want)})")
    return "; ".join(parts)


def kernel_for(co, atom):
    return co.kernel(kernel_pattern(atom))


def run_atom(emu, img, flashprobe, atom, seed=29):
    layout, _ = declared_layout(flashprobe, atom)
    A, B, C = table(layout["A"]), table(layout["B"]), table(layout["C"])
    M, K, N = layout["A"]["rows"], layout["A"]["cols"], layout["B"]["cols"]
    lanes = layout["A"]["lanes"]
    kern = kernel_for(img.co, atom)

    def launch_once(rng):
        """One launch of EXPERIMENTS random experiments: their matrices, C as sent and D as read back."""
        a = np.zeros((EXPERIMENTS, lanes, len(A[0])), np.float32)
        b = np.zeros((EXPERIMENTS, lanes, len(B[0])), np.float32)
        c = np.zeros((EXPERIMENTS, lanes, len(C[0])), np.float32)
        mats = []
        for e in range(EXPERIMENTS):
            am = rng.integers(-3, 4, (M, K)).astype(np.float32)
            bm = rng.integers(-3, 4, (K, N)).astype(np.float32)
            cm = rng.integers(-8, 9, (M, N)).astype(np.float32)
            mats.append((am, bm, cm))
            for l in range(lanes):
                for s, rc in enumerate(A[l]):
                    a[e, l, s] = am[rc] if rc else 0.0
                for s, rc in enumerate(B[l]):
                    b[e, l, s] = bm[rc] if rc else 0.0
                for s, rc in enumerate(C[l]):
                    c[e, l, s] = cm[rc] if rc else float(rng.integers(-8, 9))  # an ignored C slot: must pass through
        d = np.full_like(c, np.nan)
        explicit = {0: kernarg.i32(EXPERIMENTS)}
        for i, arr in ((1, a), (2, b), (3, c), (4, d)):
            explicit[i] = arr.ctypes.data.to_bytes(8, "little")
        grid, block = (1, 1, 1), (EXPERIMENTS * lanes, 1, 1)
        seg = kernarg.pack(kern.args, kern.kernarg_size, explicit, grid, block)
        launch.launch(emu, img, kern, grid, block, seg)
        return mats, c, d

    rng = np.random.default_rng(seed)
    t0 = time.time()
    mats, c, d = launch_once(rng)
    seconds = time.time() - t0
    used = {"checked": 0, "wrong": 0}
    ignored = {"checked": 0, "wrong": 0}  # C slots the layout leaves alone: D must pass C through
    first = []
    scales = set()  # (D - C) / (A*B) over the used slots: one value k means the emulator computes k*A*B + C
    max_ab_seen = 0.0  # max |D - C| over the used slots where A*B != 0: ~0 means the products vanished
    for e, (am, bm, cm) in enumerate(mats):
        ab = am @ bm
        for l in range(lanes):
            for s_, rc in enumerate(C[l]):
                if rc and ab[rc] != 0:
                    scales.add(float((d[e, l, s_] - cm[rc]) / ab[rc]))
                    max_ab_seen = max(max_ab_seen, abs(float(d[e, l, s_] - cm[rc])))
        want = am @ bm + cm
        for l in range(lanes):
            for s, rc in enumerate(C[l]):
                exp = want[rc] if rc else c[e, l, s]
                kind = used if rc else ignored
                kind["checked"] += 1
                if d[e, l, s] != exp:
                    kind["wrong"] += 1
                    if len(first) < 6:
                        first.append(f"e{e} T{l}V{s} {'D' + str(list(rc)) if rc else 'ignored'}: got {d[e, l, s]}, "
                                     f"want {exp}")
    wrong = used["wrong"] + ignored["wrong"]
    diagnosis, d_map = None, None
    if used["wrong"] and len(scales) == 1 and scales != {1.0}:
        diagnosis = f"every used D slot is exactly {scales.pop():g} * (A*B) + C"
    elif used["wrong"] and scales and max_ab_seen < 1e-6:
        diagnosis = f"every used D slot is C within {max_ab_seen:.1e}: A*B contributed nothing"
    elif used["wrong"]:
        # Where did the values go? A second launch's fresh values make every location unique.
        mats2, c2, d2 = launch_once(rng)
        loc = locate_d(mats + mats2, np.concatenate([c, c2]), np.concatenate([d, d2]), C)
        if loc["located"] == loc["used"] and loc["moved"]:
            diagnosis = (f"every used D slot is its own C plus one element of A*B, {loc['moved']} of {loc['used']} "
                         f"not the declared one: {describe_d_map(loc, C, (0, lanes // 2))}")
        d_map = {k: loc[k] for k in ("located", "used", "moved")}
        d_map["by_lane"] = {str(l): [list(w) if w else None for w in row] for l, row in loc["by_lane"].items()}
    return {"atom": atom, "kernel": kern.name, "used_slots": used, "ignored_slots": ignored, "diagnosis": diagnosis,
            "d_map": d_map,
            "slots_checked": used["checked"] + ignored["checked"], "slots_wrong": wrong, "first_wrong": first,
            "passed": wrong == 0, "seconds": round(seconds, 2)}
