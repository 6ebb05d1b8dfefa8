#!/usr/bin/env python3
"""Cross-check the flashprobe oracle against PyTorch on a GPU (run on the H100; needs torch + numpy).

For random attention problems (GQA, causal with Sq != Sk through an explicit bottom-right boolean
mask, top-left causal, odd head dims, fp16 and bf16) this writes, per case, into OUT/<case>/:
  problem.json           the flashprobe problem (dense BSHD)
  q.npy k.npy v.npy      inputs, BSHD; fp16 as <f2, bf16 as int16 bit patterns (<i2)
  o64.npy                PyTorch float64 SDPA (math backend) of the same stored inputs, BSHD <f8
  o_<backend>.npy        output of each fused backend (flash, cudnn, efficient) that accepted the case
and OUT/manifest.json naming, per case, which backends ran (and how: explicit mask, lower-right
causal bias, is_causal, GQA or repeated K/V heads) and which refused, with the error.
Then run reports/baselines/run_oracle_crosscheck.sh OUT to check everything with `flashprobe check`.

  python3 reports/baselines/torch_oracle_check.py --out /tmp/xcheck --cases 40 --seed 1
"""
import argparse
import json
import math
import os
import random
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

try:  # torch >= 2.3
    from torch.nn.attention.bias import causal_lower_right
except ImportError:  # pragma: no cover
    causal_lower_right = None

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": getattr(SDPBackend, "CUDNN_ATTENTION", None),
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def save_bshd(path, t):
    """Save a BSHD tensor the way `flashprobe check` reads it (bf16 as int16 bit patterns)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        np.save(path, t.view(torch.int16).numpy())
    else:
        np.save(path, t.numpy())


def random_case(rng):
    hkv = rng.choice([1, 2, 4])
    group = rng.choice([1, 1, 2, 3, 4])
    causal = rng.choice(["none", "bottom_right", "bottom_right", "top_left"])
    sk = rng.choice([1, 3, 17, 64, 100, 128, 255, 512, 1000, 2048])
    sq = rng.choice([1, 5, 16, 64, 127, 256, 512])
    if causal != "none" and sq > sk:
        sq = sk  # rows that see no key are NaN in torch and 0 in flashprobe: keep them out of this check
    return {
        "batch": rng.choice([1, 2]),
        "hq": hkv * group,
        "hkv": hkv,
        "sq": sq,
        "sk": sk,
        "d": rng.choice([40, 59, 64, 80, 96, 111, 128, 256]),
        "dtype": rng.choice(["f16", "bf16"]),
        "causal": causal,
    }


def bottom_right_mask(sq, sk, device):
    i = torch.arange(sq, device=device)[:, None]
    j = torch.arange(sk, device=device)[None, :]
    return j <= i + (sk - sq)  # True = attend (docs/attention-semantics.md: key j visible iff j <= i + Sk - Sq)


def sdpa(q, k, v, case, how):
    """q [B,Hq,Sq,D], k/v [B,Hkv,Sk,D] -> [B,Hq,Sq,D] with the masking variant `how`."""
    group = case["hq"] // case["hkv"]
    kw = {}
    if how.endswith("+gqa"):
        kw["enable_gqa"] = True
    elif group > 1:
        k = k.repeat_interleave(group, dim=1)  # query head h reads kv head h // group
        v = v.repeat_interleave(group, dim=1)
    mode = how.split("+")[0]
    if mode == "none":
        return F.scaled_dot_product_attention(q, k, v, **kw)
    if mode == "is_causal":
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, **kw)
    if mode == "mask":
        m = bottom_right_mask(case["sq"], case["sk"], q.device)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
    if mode == "lower_right":
        return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(case["sq"], case["sk"]), **kw)
    raise ValueError(how)


def variants(case):
    """The ways to ask a backend for this case, most direct first."""
    base = {"none": ["none"], "top_left": ["is_causal"], "bottom_right": ["mask", "lower_right"]}[case["causal"]]
    if case["causal"] == "bottom_right" and case["sq"] == case["sk"]:
        base = base + ["is_causal"]  # identical when Sq == Sk
    if causal_lower_right is None:
        base = [b for b in base if b != "lower_right"]
    out = []
    for b in base:
        if case["hq"] != case["hkv"]:
            out.append(b + "+gqa")
        out.append(b)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_oracle_check.py: no CUDA device visible to PyTorch")
    dev = "cuda"
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    manifest = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0),
        "seed": args.seed,
        "cases": [],
    }
    for n in range(args.cases):
        case = random_case(rng)
        name = "case%03d_b%d_hq%d_hkv%d_sq%d_sk%d_d%d_%s_%s" % (
            n, case["batch"], case["hq"], case["hkv"], case["sq"], case["sk"], case["d"], case["dtype"], case["causal"])
        cdir = os.path.join(args.out, name)
        os.makedirs(cdir, exist_ok=True)
        dt = DTYPES[case["dtype"]]
        B, Sq, Sk, Hq, Hkv, D = case["batch"], case["sq"], case["sk"], case["hq"], case["hkv"], case["d"]
        q = torch.randn(B, Sq, Hq, D, device=dev).to(dt)  # BSHD, as stored
        k = torch.randn(B, Sk, Hkv, D, device=dev).to(dt)
        v = torch.randn(B, Sk, Hkv, D, device=dev).to(dt)
        save_bshd(os.path.join(cdir, "q.npy"), q)
        save_bshd(os.path.join(cdir, "k.npy"), k)
        save_bshd(os.path.join(cdir, "v.npy"), v)
        problem = {"batch": B, "hq": Hq, "hkv": Hkv, "sq": Sq, "sk": Sk, "d": D, "dv": D,
                   "dtype": case["dtype"], "out_dtype": case["dtype"], "causal": case["causal"]}
        with open(os.path.join(cdir, "problem.json"), "w") as f:
            json.dump(problem, f, indent=1)

        # float64 of the exact stored values, math backend, explicit mask for bottom-right.
        qh, kh, vh = (t.transpose(1, 2) for t in (q, k, v))  # -> BHSD for SDPA
        with sdpa_kernel(SDPBackend.MATH):
            how64 = {"none": "none", "top_left": "is_causal", "bottom_right": "mask"}[case["causal"]]
            o64 = sdpa(qh.double(), kh.double(), vh.double(), case, how64)
        np.save(os.path.join(cdir, "o64.npy"), o64.transpose(1, 2).contiguous().cpu().numpy())

        entry = {"name": name, "problem": problem, "ran": {}, "refused": {}}
        for bname, backend in BACKENDS.items():
            if backend is None:
                entry["refused"][bname] = "this torch has no such backend"
                continue
            errors = []
            for how in variants(case):
                try:
                    with sdpa_kernel(backend):
                        o = sdpa(qh, kh, vh, case, how)
                    torch.cuda.synchronize()
                    save_bshd(os.path.join(cdir, "o_%s.npy" % bname), o.transpose(1, 2))
                    entry["ran"][bname] = how
                    break
                except Exception as e:  # a backend refusing a case raises RuntimeError
                    errors.append("%s: %s" % (how, str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__))
            else:
                entry["refused"][bname] = errors
        manifest["cases"].append(entry)
        print("%s ran %s refused %s" % (name, sorted(entry["ran"]), sorted(entry["refused"])), flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
