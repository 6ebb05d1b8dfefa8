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


def kernel_for(co, atom):
    return co.kernel(kernel_pattern(atom))


def run_atom(emu, img, flashprobe, atom, seed=29):
    layout, _ = declared_layout(flashprobe, atom)
    A, B, C = table(layout["A"]), table(layout["B"]), table(layout["C"])
    M, K, N = layout["A"]["rows"], layout["A"]["cols"], layout["B"]["cols"]
    lanes = layout["A"]["lanes"]
    rng = np.random.default_rng(seed)
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
    kern = kernel_for(img.co, atom)
    explicit = {0: kernarg.i32(EXPERIMENTS)}
    for i, arr in ((1, a), (2, b), (3, c), (4, d)):
        explicit[i] = arr.ctypes.data.to_bytes(8, "little")
    grid, block = (1, 1, 1), (EXPERIMENTS * lanes, 1, 1)
    seg = kernarg.pack(kern.args, kern.kernarg_size, explicit, grid, block)
    t0 = time.time()
    launch.launch(emu, img, kern, grid, block, seg)
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
    diagnosis = None
    if used["wrong"] and len(scales) == 1 and scales != {1.0}:
        diagnosis = f"every used D slot is exactly {scales.pop():g} * (A*B) + C"
    elif used["wrong"] and scales and max_ab_seen < 1e-6:
        diagnosis = f"every used D slot is C within {max_ab_seen:.1e}: A*B contributed nothing"
    return {"atom": atom, "kernel": kern.name, "used_slots": used, "ignored_slots": ignored, "diagnosis": diagnosis,
            "slots_checked": used["checked"] + ignored["checked"], "slots_wrong": wrong, "first_wrong": first,
            "passed": wrong == 0, "seconds": round(seconds, 2)}
