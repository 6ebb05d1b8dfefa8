"""Greedy shrinking of a problem on which a subject raises (a crash, not a wrong answer).

Hypothesis shrinks the cases check_kernel draws, but a crash the harness records as a finding
(torch_props.py: a torch.compile failure of FlexAttention) must not end the run, so it never reaches
Hypothesis's shrinker. This one starts from the crashing problem and tries one simplification at a
time (fewer batch elements and heads, no per-batch key lengths, ALiBi, soft-cap, window, KV offset or
causal mask, shorter sequences, d = dv = 64, the default scale), keeping a change whenever the
subject still raises the same exception type, until no change keeps it or the time is up. Each
candidate is a valid problem (the C++ reader judges it); `fails(problem)` runs the subject.

    shrink(fails, problem, seconds=60) -> {"problem": {...}, "id", "steps", "attempts", "seconds", "stopped_by"}
"""
from __future__ import annotations

import json
import time

import flashprobe


def _heads(j, nq, nkv):
    slopes = j.get("alibi_slopes") or []
    return dict(hq=nq, hkv=nkv, alibi_slopes=slopes[:nq] if slopes else [])


def candidates(problem):
    """(what changed, problem JSON) for every one-step simplification of problem, largest first."""
    j = json.loads(problem.to_json())
    out = []

    def add(what, **change):
        c = dict(j)
        c.update(change)
        if c != j:
            out.append((what, c))

    seqlens = j.get("seqlens_k") or []
    if j["batch"] > 1:
        add("batch 1", batch=1, seqlens_k=seqlens[:1])
        if seqlens:
            add("batch 1, its shortest keys", batch=1, seqlens_k=[min(seqlens)])
    if seqlens:
        add("no per-batch key lengths", seqlens_k=[])
    if j.get("alibi_slopes"):
        add("no ALiBi", alibi_slopes=[])
    if j.get("softcap"):
        add("no soft-cap", softcap=0.0)
    if j.get("window_left", -1) >= 0 or j.get("window_right", -1) >= 0:
        add("no window", window_left=-1, window_right=-1)
        add("no left window", window_left=-1)
        add("no right window", window_right=-1)
    if j.get("kv_offset"):
        add("no KV offset", kv_offset=0)
    if j.get("causal", "none") != "none":
        add("not causal", causal="none")
        if j["causal"] == "bottom_right":
            add("causal top_left", causal="top_left")
    hq, hkv = j["hq"], j["hkv"]
    g = hq // hkv
    add("one head", **_heads(j, 1, 1))
    add("one kv head", **_heads(j, g, 1))
    add("MHA", **_heads(j, hkv, hkv))
    if g > 2:
        add("group 2", **_heads(j, 2, 1))
        add("half the group", **_heads(j, hkv * (g // 2), hkv))
    if hkv > 1:
        add("half the kv heads", **_heads(j, (hkv // 2) * g, hkv // 2))
    for f in ("sq", "sk"):
        n = j[f]
        for m in sorted({1, n // 2, n - 1}):
            if 0 < m < n:
                ch = {f: m}
                if f == "sk" and seqlens:
                    ch["seqlens_k"] = [min(x, m) for x in seqlens]
                if j.get("kv_offset"):  # the cache holds kv_offset + sq keys: the offset moves with the length
                    off = j["kv_offset"] + (n - m if f == "sq" else m - n)
                    if off < 0:
                        continue
                    ch["kv_offset"] = off
                add(f"{f} {m}", **ch)
    if j["d"] != 64 or j.get("dv", j["d"]) != 64:
        add("d = dv = 64", d=64, dv=64)
    if j.get("dv", j["d"]) != j["d"]:
        add("dv = d", dv=j["d"])
    if j.get("scale"):
        add("default scale", scale=0.0)
    return out


def shrink(fails, problem, seconds=60.0, max_attempts=300):
    """The smallest problem found from `problem` on which fails(problem) stays true (see the module doc)."""
    t0 = time.perf_counter()
    attempts, steps, cur = 0, [], problem
    stopped_by = "minimal"
    progress = True
    while progress:
        progress = False
        for what, c in candidates(cur):
            if time.perf_counter() - t0 > seconds or attempts >= max_attempts:
                stopped_by = "time budget" if attempts < max_attempts else "attempt budget"
                progress = False
                break
            try:
                cand = flashprobe.Problem.from_json(json.dumps(c))
            except ValueError:  # flashprobe.UsageError: not a valid problem
                continue
            attempts += 1
            if fails(cand):
                steps.append(what)
                cur = cand
                progress = True
                break
    return {"problem": json.loads(cur.to_json()), "id": cur.id, "steps": steps, "attempts": attempts,
            "seconds": round(time.perf_counter() - t0, 1), "stopped_by": stopped_by}
