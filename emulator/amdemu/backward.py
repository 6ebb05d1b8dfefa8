"""One backward case on the emulator: the AMD forward, then the AMD tensor-core backward
(mma_bwd_amd: row term, dK/dV, dQ) of their code objects, both checked by the oracle in one record.

    r = run_case(emu, tools, fwd_img, bwd_img, family="gfx11", problem={...}, seed=1, out_dir="case/")
    r["passed"], r["check"] (flashprobe check's JSON: the forward verdict and "backward"), r["seconds"]

The forward is attention.run_case (its O and LSE are what a training step hands the backward); dO is
seeded normal values in the dtype; dQ, dK, dV start as NaN bit patterns (0xffff in f16 and bf16) so
that an element the kernels never write fails the check. The three launches come from
flashprobe_amd_plan --pass backward (kernels/src/mma/mma_bwd_amd_plan.h: grids, block, the BwdParams
bytes and the offsets of its pointers).
"""
import json
import os
import subprocess
import time

import numpy as np

from . import attention, kernarg, launch


def bwd_plan_for(tools, problem_path, family):
    r = subprocess.run([tools["plan"], "--problem", problem_path, "--family", family, "--pass", "backward"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(r.stderr.strip() or f"flashprobe_amd_plan --pass backward exited {r.returncode}")
    return json.loads(r.stdout)


def kernel_patterns(plan):
    """The mangled names of bwd_rowdot<Bug::none>, amd_bwd_dkdv<ATOM, ELEM, D, T> and amd_bwd_dq<...>."""
    atom, elem = plan["atom"], plan["elem"]
    tmpl = rf"INS_5atoms{len(atom)}{atom}ENS1_{len(elem)}{elem}ELi{plan['d']}ELi{plan['tile']}EEEvNS0_9BwdParamsE$"
    return {"rowdot": r"^_ZN10flashprobe7kernels3dev10bwd_rowdotILNS0_3BugE0EEEvNS0_9BwdParamsE$",
            "dkdv": r"^_ZN10flashprobe7kernels3dev12amd_bwd_dkdv" + tmpl,
            "dq": r"^_ZN10flashprobe7kernels3dev10amd_bwd_dq" + tmpl}


def unwritten(shape):
    """A 16-bit gradient buffer holding 0xffff (a NaN in f16 and bf16) in every element."""
    return np.full(shape, 0xFFFF, dtype=np.uint16)


def run_case(emu, tools, fwd_img, bwd_img, family, problem, seed, out_dir):
    fwd = attention.run_case(emu, tools, fwd_img, family, problem, seed, out_dir)
    ppath = os.path.join(out_dir, "problem.json")
    p = json.load(open(ppath))
    plan = bwd_plan_for(tools, ppath, family)
    kerns = {k: bwd_img.co.kernel(pat) for k, pat in kernel_patterns(plan).items()}
    t = {name: np.load(os.path.join(out_dir, f"{name}.npy")) for name in ("q", "k", "v", "o", "lse")}
    b, sq, sk, hq, hkv, d, dv = p["batch"], p["sq"], p["sk"], p["hq"], p["hkv"], p["d"], p["dv"]
    rng = np.random.default_rng(seed + 7919)  # dO: its own stream, reproducible from the case's seed
    t["dout"] = attention.make_input(rng, (b, sq, hq, dv), p["dtype"])
    t["dq"], t["dk"], t["dv"] = unwritten((b, sq, hq, d)), unwritten((b, sk, hkv, d)), unwritten((b, sk, hkv, dv))
    t["dvec"] = np.full((b, hq, sq), np.nan, dtype=np.float32)
    t = {k: np.ascontiguousarray(v) for k, v in t.items()}
    params = bytearray(bytes.fromhex(plan["params_hex"]))
    for name in ("q", "k", "v", "o", "lse", "dout", "dq", "dk", "dv", "dvec"):
        off = plan["pointers"][name]
        params[off:off + 8] = t[name].ctypes.data.to_bytes(8, "little")
    launches = [("rowdot", plan["grid_rowdot"], plan["rowdot_threads"]), ("dkdv", plan["grid_dkdv"], plan["threads"]),
                ("dq", plan["grid_dq"], plan["threads"])]
    t0 = time.time()
    for name, grid, threads in launches:
        grid, block = tuple(grid), (threads, 1, 1)
        if 0 in grid:
            continue
        seg = kernarg.pack(kerns[name].args, kerns[name].kernarg_size, {0: params}, grid, block)
        launch.launch(emu, bwd_img, kerns[name], grid, block, seg)
    seconds = time.time() - t0
    paths = {}
    for name in ("dout", "dq", "dk", "dv"):
        arr = t[name]
        if p["dtype"] == "f16" and name != "dout":
            arr = arr.view(np.float16)
        paths[name] = os.path.join(out_dir, f"{name}.npy")
        np.save(paths[name], arr)
    rjson = os.path.join(out_dir, "check_backward.json")
    f = {n: os.path.join(out_dir, f"{n}.npy") for n in ("q", "k", "v", "o", "lse")}
    cmd = [tools["flashprobe"], "check", "--problem", ppath, "--q", f["q"], "--k", f["k"], "--v", f["v"], "--o", f["o"],
           "--lse", f["lse"], "--do", paths["dout"], "--dq", paths["dq"], "--dk", paths["dk"], "--dv", paths["dv"],
           "--json", rjson]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out_dir, "check_backward.txt"), "w") as fh:
        fh.write(r.stdout + r.stderr)
    check = json.load(open(rjson)) if os.path.exists(rjson) else None
    return {"problem": p, "seed": seed, "kernels": {k: v.name for k, v in kerns.items()},
            "grids": {n: list(g) for n, g, _ in launches}, "block": [plan["threads"], 1, 1],
            "scratch_bytes": {k: v.descriptor.private_segment_fixed_size for k, v in kerns.items()},
            "forward_passed": fwd["passed"], "forward_kernel": fwd["kernel"], "forward_scratch_bytes": fwd["scratch_bytes"],
            "patched_invalidates": bwd_img.patched, "seconds": round(seconds, 2),
            "exit_code": r.returncode, "passed": r.returncode == 0, "check": check,
            "output": (r.stdout + r.stderr).strip().splitlines()[-3:]}


__all__ = ["run_case", "kernel_patterns", "bwd_plan_for"]
