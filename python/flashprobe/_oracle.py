"""flashprobe.check and flashprobe.reference: the C++ oracle (oracle/check.h, oracle/reference.h)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from . import _core
from ._arrays import host
from ._problem import Problem


def _problem(problem: Any) -> "_core.Problem":
    if isinstance(problem, Problem):
        return problem._p
    if isinstance(problem, (str, bytes, dict)):
        return _core.Problem.read(problem)
    raise TypeError(f"problem is a {type(problem).__name__}: give a flashprobe.Problem, its JSON or a dict")


def _hosts(named: "dict[str, Any]") -> "tuple[dict[str, Any], list[str]]":
    arrays, bf16 = {}, []
    for name, x in named.items():
        if x is None:
            arrays[name] = None
            continue
        arrays[name], is_bf16 = host(x, name)
        if is_bf16:
            bf16.append(name)
    return arrays, bf16


class CheckResult:
    """The oracle's verdict on one output (oracle/check.h, TOLERANCE.md).

    passed        the output is right up to the rounding a correct kernel makes
    margin        O's error / O's bound (<= 1 passes); lse_margin likewise when LSE was given
    reason        what failed, with the numbers ('' when passed)
    metrics       the output against the double reference: max_abs, max_rel, nmse, cosine, max_ulp,
                  bias_ulp, NaN/Inf counts, where the worst error is, ... (emulated_metrics: the
                  low-precision emulation against the same reference, the yardstick)
    record        the whole record, as `flashprobe check --json` writes it
    """

    __slots__ = ("_r", "record")

    def __init__(self, r: "_core.CheckResult"):
        self._r = r
        self.record = r.record()

    passed = property(lambda self: self._r.passed)
    margin = property(lambda self: self._r.margin)
    bound = property(lambda self: self._r.bound)
    atol = property(lambda self: self._r.atol)
    lse_checked = property(lambda self: self._r.lse_checked)
    lse_margin = property(lambda self: self._r.lse_margin if self._r.lse_checked else None)
    lse_bound = property(lambda self: self._r.lse_bound if self._r.lse_checked else None)
    reason = property(lambda self: self._r.reason)
    case_id = property(lambda self: self._r.case_id)
    rows_checked = property(lambda self: self._r.rows_checked)
    rows_total = property(lambda self: self._r.rows_total)
    metrics = property(lambda self: self.record["metrics"])
    emulated_metrics = property(lambda self: self.record["emulated_metrics"])

    @property
    def summary(self) -> str:
        """One line: PASS/FAIL, the case, errors against bounds, margins (the CLI's line)."""
        return self._r.summary()

    def __repr__(self) -> str:
        return f"<flashprobe.CheckResult {self.summary}>"


def check(problem: Any, q: Any, k: Any, v: Any, o: Any, lse: Any = None, rows: int = 0, seed: int = 0,
          allow_nan_inputs: bool = False) -> CheckResult:
    """Judges a kernel's output o (and lse, if given) on inputs q, k, v against the oracle.

    Arrays: numpy arrays, torch tensors (any device; copied to the host when on a GPU) or any DLPack
    array, with any strides. Q, K, V, O are [B, S, H, D], or [B, H, S, D] for a tensor whose problem
    strides are BHSD (Problem(layout="bhsd")); LSE is [B, Hq, Sq] float32 (or float64). Q, K, V have
    the problem's dtype and O its out_dtype: float16, float32, or for bf16 torch.bfloat16,
    ml_dtypes.bfloat16 or the uint16/int16 bit patterns. rows > 0 checks that many sampled query rows
    (seeded by seed; NaN/Inf are still scanned everywhere). Bad input raises flashprobe.UsageError
    with the C++ message; a wrong output returns a result with passed False. An input holding NaN
    raises UsageError naming the tensor and position, unless allow_nan_inputs (then the NaN propagates
    by IEEE rules and the output must show the reference's NaN pattern), as `flashprobe check
    --allow-nan-inputs`.
    """
    p = _problem(problem)
    a, bf16 = _hosts({"Q": q, "K": k, "V": v, "O": o, "LSE": lse})
    return CheckResult(_core.check(p, a["Q"], a["K"], a["V"], a["O"], a["LSE"], rows, seed, bf16, bool(allow_nan_inputs)))


def reference(problem: Any, q: Any, k: Any, v: Any, rows: Optional[Sequence[int]] = None) -> "tuple[np.ndarray, np.ndarray]":
    """The oracle's exact attention in float64: (O, LSE).

    O is [B, R, Hq, Dv] ([B, Hq, R, Dv] when O's layout is BHSD) and LSE [B, Hq, R] (natural log, -inf
    for rows that see no key), where R = Sq, or len(rows) for the query rows listed (in that order).
    """
    p = _problem(problem)
    a, bf16 = _hosts({"Q": q, "K": k, "V": v})
    row_list = None if rows is None else [int(r) for r in rows]
    return _core.reference(p, a["Q"], a["K"], a["V"], row_list, bf16)


class BackwardCheckResult:
    """The oracle's verdict on a backward kernel's gradients (oracle/grad_check.h, BACKWARD_TOLERANCE.md).

    passed        every gradient given is right up to the rounding a correct FlashAttention-2 style
                  backward makes
    failed        a check failed (a gradient outside its bound, a bias, a NaN/Inf where the oracle has none)
    bounded       every gradient given could be bounded; False where a bound admits every plausible
                  gradient (logits of order 1e5): then passed is False, and failed too only if a check failed
    dq_margin, dk_margin, dv_margin
                  each gradient's error / its bound (<= 1 passes); None for a gradient not given
    reason        what failed, with the numbers ('' when passed)
    record        the whole record, as `flashprobe check --do ... --dq ... --json` writes it (the
                  verdict under "backward": per gradient its metrics, the emulation's, bound, margin)
    """

    __slots__ = ("_r", "record")

    def __init__(self, r: "_core.BackwardCheckResult"):
        self._r = r
        self.record = r.record()

    passed = property(lambda self: self._r.passed)
    failed = property(lambda self: self._r.failed)
    bounded = property(lambda self: self._r.bounded)
    dq_margin = property(lambda self: self._r.dq_margin)
    dk_margin = property(lambda self: self._r.dk_margin)
    dv_margin = property(lambda self: self._r.dv_margin)
    reason = property(lambda self: self._r.reason)
    case_id = property(lambda self: self._r.case_id)

    @property
    def summary(self) -> str:
        """One line: PASS/FAIL/NOT BOUNDED, the case, each gradient's error against its bound (the CLI's line)."""
        return self._r.summary()

    def __repr__(self) -> str:
        return f"<flashprobe.BackwardCheckResult {self.summary}>"


def check_backward(problem: Any, q: Any, k: Any, v: Any, do: Any, dq: Any = None, dk: Any = None, dv: Any = None,
                   o: Any = None, lse: Any = None) -> BackwardCheckResult:
    """Judges a backward kernel's gradients dq, dk, dv (any of them, at least one) of L = sum(do * O)
    for the inputs q, k, v against the gradient oracle: the same C++ check as `flashprobe check --do
    --dq --dk --dv`.

    do is the upstream gradient, shaped and typed like O (out_dtype); dq, dk, dv are shaped and typed
    like Q, K, V. o and lse are the forward's O and LSE the backward was given: the low-precision
    emulation that sets the bound starts from them (None: from its own emulated forward). Arrays as in
    check(): numpy, torch (any device) or DLPack, [B, S, H, D] or [B, H, S, D] for BHSD problems; bf16
    as torch.bfloat16, ml_dtypes.bfloat16 or uint16 bit patterns. Bad input raises
    flashprobe.UsageError naming the tensor; wrong gradients return a result with passed False.
    """
    p = _problem(problem)
    a, bf16 = _hosts({"Q": q, "K": k, "V": v, "dO": do, "dQ": dq, "dK": dk, "dV": dv, "O": o, "LSE": lse})
    return BackwardCheckResult(_core.check_backward(p, a["Q"], a["K"], a["V"], a["dO"], a["dQ"], a["dK"], a["dV"], a["O"],
                                                    a["LSE"], bf16))
