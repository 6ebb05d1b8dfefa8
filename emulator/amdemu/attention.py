"""One attention case on the emulator: the AMD mma kernel of a code object, checked by the oracle.

    r = run_case(emu, tools, img, family="gfx11", problem={...}, seed=1, out_dir="case/")
    r["passed"], r["check"] (flashprobe check's JSON), r["seconds"]

The launch comes from flashprobe_amd_plan (kernels/src/mma/mma_amd_plan.h: instantiation, grid,
block, the Params bytes); inputs are seeded normal values rounded to the problem's dtype; O and LSE
come back from host memory and go, as NPY files, through `flashprobe check` (the oracle's check, the
same one every GPU result takes).
"""
import json
import os
import subprocess
import time

import numpy as np

from . import kernarg, launch
from .codeobject import CodeObjectError


def bf16_bits(x):
    """float32 -> bf16 bit patterns (round to nearest even), as uint16."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def make_input(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)
    if dtype == "bf16":
        return bf16_bits(x)
    raise ValueError(f"dtype {dtype!r}: the mma kernel takes f16 or bf16")


def kernel_pattern(plan):
    """The mangled name of mma_fwd<atoms::ATOM, ELEM, D, waves, bn, 1, true, false, 0> (the shipped
    instantiation: no extras, the small-head-dim knobs at their defaults)."""
    atom, elem = plan["atom"], plan["elem"]
    return (rf"^_ZN10flashprobe7kernels3dev7mma_fwdINS_5atoms{len(atom)}{atom}ENS1_{len(elem)}{elem}E"
            rf"Li{plan['d']}ELi{plan['waves']}ELi{plan['bn']}ELi1ELb1ELb0ELi0EEEv")


def plan_for(tools, problem_path, family):
    r = subprocess.run([tools["plan"], "--problem", problem_path, "--family", family], capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(r.stderr.strip() or f"flashprobe_amd_plan exited {r.returncode}")
    return json.loads(r.stdout)


def run_case(emu, tools, img, family, problem, seed, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    p = dict(problem)
    p.setdefault("dv", p["d"])
    p.setdefault("out_dtype", p["dtype"])
    ppath = os.path.join(out_dir, "problem.json")
    with open(ppath, "w") as f:
        json.dump(p, f)
    plan = plan_for(tools, ppath, family)
    kern = img.co.kernel(kernel_pattern(plan))
    if p.get("seqlens_k") or p.get("alibi_slopes"):
        raise ValueError("the harness does not stage seqlens_k or alibi_slopes buffers yet")
    rng = np.random.default_rng(seed)
    b, sq, sk, hq, hkv, d, dv = p["batch"], p["sq"], p["sk"], p["hq"], p["hkv"], p["d"], p["dv"]
    q = make_input(rng, (b, sq, hq, d), p["dtype"])
    k = make_input(rng, (b, sk, hkv, d), p["dtype"])
    v = make_input(rng, (b, sk, hkv, dv), p["dtype"])
    o = np.zeros((b, sq, hq, dv), dtype=q.dtype)
    lse = np.full((b, hq, sq), np.nan, dtype=np.float32)
    o.fill(0)
    params = bytearray(bytes.fromhex(plan["params_hex"]))
    for name, arr in (("q", q), ("k", k), ("v", v), ("o", o), ("lse", lse)):
        off = plan["pointers"][name]
        params[off:off + 8] = arr.ctypes.data.to_bytes(8, "little")
    explicit = {0: params, 1: kernarg.i32(plan["order"]), 2: plan["rescale_log2_bits"].to_bytes(4, "little")}
    grid, block = tuple(plan["grid"]), (plan["threads"], 1, 1)
    seg = kernarg.pack(kern.args, kern.kernarg_size, explicit, grid, block)
    t0 = time.time()
    launch.launch(emu, img, kern, grid, block, seg)
    seconds = time.time() - t0
    paths = {}
    for name, arr in (("q", q), ("k", k), ("v", v), ("o", o), ("lse", lse)):
        paths[name] = os.path.join(out_dir, f"{name}.npy")
        np.save(paths[name], arr)
    rjson = os.path.join(out_dir, "check.json")
    cmd = [tools["flashprobe"], "check", "--problem", ppath, "--q", paths["q"], "--k", paths["k"], "--v", paths["v"],
           "--o", paths["o"], "--lse", paths["lse"], "--json", rjson]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out_dir, "check.txt"), "w") as f:
        f.write(r.stdout + r.stderr)
    check = json.load(open(rjson)) if os.path.exists(rjson) else None
    return {"problem": p, "seed": seed, "kernel": kern.name, "grid": list(grid), "block": list(block),
            "scratch_bytes": kern.descriptor.private_segment_fixed_size,
            "patched_invalidates": img.patched, "seconds": round(seconds, 2), "exit_code": r.returncode,
            "passed": r.returncode == 0, "check": check,
            "output": (r.stdout + r.stderr).strip().splitlines()[-3:]}


__all__ = ["run_case", "kernel_pattern", "make_input", "bf16_bits", "CodeObjectError"]
