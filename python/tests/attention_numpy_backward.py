"""Attention backward kernels in numpy, as subjects for flashprobe.check_backward: a correct one and
ones with the backward bugs of the mutant catalogue planted (kernels/src/mutant_catalogue.cpp).

backward(problem, q, k, v, o, do) returns (dQ, dK, dV) in the problem's dtype and the inputs'
layouts, the gradients of L = sum(do * O) (docs/attention-semantics.md's attention). D = rowsum(do *
o) is taken from the O given, as FlashAttention-2 does. These are kernels under test, not a second
oracle.
"""
from __future__ import annotations

import numpy as np

from attention_numpy import NUMPY_DTYPES, as_bshd, mask


def backward(problem, q, k, v, o, do, *, bug=None):
    p = problem
    lay = p.tensor_layouts
    Q, K, V = as_bshd(q, lay["q"]), as_bshd(k, lay["k"]), as_bshd(v, lay["v"])
    O, dO = as_bshd(o, lay["o"]), as_bshd(do, lay["o"])
    B, Hq, Hkv = p.batch, p.hq, p.hkv
    group = Hq // Hkv
    scale = p.effective_scale
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    for b in range(B):
        diag, visible = mask(p, b)
        if bug == "causal_missing":  # the backward recomputes P without the causal bound
            _, visible = mask(p, b, causal=False)
        j = np.arange(p.sk)[None, :]
        for kv in range(Hkv):
            heads = range(kv * group, (kv + 1) * group)
            if bug == "gqa_unsummed":  # dK, dV of the last query head of the group only
                heads = [(kv + 1) * group - 1]
            for h in heads:
                s = Q[b, :, h, :] @ K[b, :, kv, :].T * scale
                fac = 1.0
                if p.softcap:
                    t = np.tanh(s / p.softcap)
                    s = p.softcap * t
                    if bug != "softcap_grad_missing":
                        fac = 1 - t * t
                if p.alibi_slopes:
                    s = s - p.alibi_slopes[h] * np.abs(diag - j)
                s = np.where(visible, s, -np.inf)
                m = s.max(axis=1, keepdims=True) if p.sk else np.zeros((p.sq, 1))
                m = np.where(np.isfinite(m), m, 0.0)
                e = np.where(visible, np.exp(s - m), 0.0)
                l = e.sum(axis=1, keepdims=True)
                P = e / np.where(l > 0, l, 1.0)
                dP = dO[b, :, h, :] @ V[b, :, kv, :].T
                D = 0.0 if bug == "no_rowsum_d" else (dO[b, :, h, :] * O[b, :, h, :]).sum(axis=1, keepdims=True)
                dS = P * (dP - D) * fac
                dQ[b, :, h, :] = dS @ K[b, :, kv, :] * scale
                dK[b, :, kv, :] += dS.T @ Q[b, :, h, :] * (1.0 if bug == "dk_unscaled" else scale)
                dV[b, :, kv, :] += P.T @ dO[b, :, h, :]
    t = NUMPY_DTYPES[p.dtype]

    def out(x, layout):
        x = x.astype(t)
        return x.transpose(0, 2, 1, 3) if layout == "bhsd" else x

    return out(dQ, lay["q"]), out(dK, lay["k"]), out(dV, lay["v"])


BUGS = {
    "no_rowsum_d": "dS = P dP: rowsum(dO * O) is not subtracted",
    "gqa_unsummed": "dK and dV of a kv head come from the last query head of its group only",
    "softcap_grad_missing": "the soft-cap derivative 1 - tanh^2 is left out of dS",
    "causal_missing": "the backward recomputes P without the causal mask",
    "dk_unscaled": "dK is not multiplied by the softmax scale",
}
