"""Attention kernels in numpy, as subjects for the tests: a correct one and ones with planted bugs.

They take what flashprobe.testing.check_kernel gives a kernel (a Problem and Q, K, V numpy arrays
in the problem's layout; bf16 as ml_dtypes.bfloat16) and return (O in out_dtype, LSE float32). The
semantics are docs/attention-semantics.md's (core/problem.h); these are kernels under test, not a second oracle: the
planted bugs are the classes that broke real kernels.
"""
from __future__ import annotations

import numpy as np

from flashprobe._arrays import BFLOAT16

NUMPY_DTYPES = {"f16": np.float16, "f32": np.float32, "bf16": BFLOAT16}


def as_bshd(x, layout: str) -> np.ndarray:
    """[B, S, H, D] float64 view of an input array given in the problem's layout."""
    x = np.asarray(x).astype(np.float64)
    return x.transpose(0, 2, 1, 3) if layout == "bhsd" else x


def mask(p, b, bug=None, causal=True):
    """(diag [Sq, 1], visible [Sq, Sk]) of batch element b: each row's diagonal key and the keys it
    sees (causal=False drops the causal bound, windows stay)."""
    i = np.arange(p.sq)[:, None]
    j = np.arange(p.sk)[None, :]
    keys = p.seqlens_k[b] if p.seqlens_k else p.sk
    if bug == "ignore_seqlens":
        keys = p.sk
    diag = i + p.diag_offset(b)
    if bug == "top_left_always" and p.causal != "none":
        diag = i + 0
    visible = np.broadcast_to(j < keys, (p.sq, p.sk)).copy()
    if p.causal != "none" and causal:
        visible &= j <= diag
    if p.window_left >= 0:
        lo = diag - p.window_left + (1 if bug == "window_off_by_one" else 0)
        visible &= j >= lo
    if p.window_right >= 0:
        visible &= j <= diag + p.window_right
    return diag, visible


def attention(problem, q, k, v, *, accum=np.float64, bug=None):
    """O and LSE of the problem; `bug` plants one defect (see BUGS)."""
    p = problem
    layouts = p.tensor_layouts
    Q, K, V = as_bshd(q, layouts["q"]), as_bshd(k, layouts["k"]), as_bshd(v, layouts["v"])
    B, Sq, Hq, Sk, Hkv = p.batch, p.sq, p.hq, p.sk, p.hkv
    group = Hq // Hkv
    scale = p.effective_scale if bug != "default_scale" else 1 / np.sqrt(p.d)
    O = np.zeros((B, Sq, Hq, p.dv))
    LSE = np.full((B, Hq, Sq), -np.inf)
    j = np.arange(Sk)[None, :]
    for b in range(B):
        diag, visible = mask(p, b, bug)
        for h in range(Hq):
            kv = h % Hkv if bug == "gqa_modulo" else h // group
            s = (Q[b, :, h, :].astype(accum) @ K[b, :, kv, :].astype(accum).T) * accum(scale)
            if p.softcap:
                s = p.softcap * np.tanh(s / p.softcap)
            if p.alibi_slopes:
                s = s - p.alibi_slopes[h] * np.abs(diag - j)
            s = np.where(visible, s, -np.inf)
            m = s.max(axis=1, keepdims=True) if Sk else np.full((Sq, 1), -np.inf)
            if bug == "no_max_subtraction":
                m = np.where(np.isfinite(m), 0.0, m)
            with np.errstate(invalid="ignore", over="ignore"):
                e = np.where(visible, np.exp(s - np.where(np.isfinite(m), m, 0.0)), 0.0)
                l = e.sum(axis=1, keepdims=True)
                if bug == "drop_last_key" and Sk:
                    e[:, -1] = 0.0
                o = (e @ V[b, :, kv, :].astype(accum)) / np.where(l > 0, l, 1.0)
                lse = np.where(l[:, 0] > 0, m[:, 0] + np.log(np.where(l[:, 0] > 0, l[:, 0], 1.0)), -np.inf)
            if bug == "lse_log2":
                lse = lse / np.log(2)
            O[b, :, h, :] = o
            LSE[b, h, :] = lse
    out = O.astype(NUMPY_DTYPES[p.out_dtype])
    if bug == "round_toward_zero" and p.out_dtype == "bf16":
        bits = O.astype(np.float32).view(np.uint32) >> 16  # bf16 by truncation
        out = bits.astype(np.uint16).view(BFLOAT16)
    if layouts["o"] == "bhsd":
        out = out.transpose(0, 2, 1, 3)
    return out, LSE.astype(np.float32)


def correct(problem, q, k, v):
    return attention(problem, q, k, v)


def correct_f32(problem, q, k, v):
    """Scores, softmax and P V in float32, as a GPU kernel accumulates them."""
    return attention(problem, q, k, v, accum=np.float32)


BUGS = {
    "gqa_modulo": "query head h reads kv head h % hkv instead of h // (hq / hkv)",
    "ignore_seqlens": "every batch element attends to all sk keys, ignoring seqlens_k",
    "top_left_always": "the causal diagonal is the top-left one even for bottom_right",
    "window_off_by_one": "the sliding window's left bound excludes one key too many",
    "no_max_subtraction": "the softmax does not subtract the row max (overflows at large scores)",
    "drop_last_key": "the last key's probability is dropped from O (but counted in the sum)",
    "lse_log2": "LSE in base 2 instead of natural log",
    "default_scale": "the problem's scale is ignored (1/sqrt(d) always)",
    "round_toward_zero": "bf16 outputs rounded by truncation instead of to nearest",
}


def planted(bug: str):
    def kernel(problem, q, k, v):
        return attention(problem, q, k, v, bug=bug)

    kernel.__name__ = kernel.__qualname__ = f"planted_{bug}"
    return kernel
