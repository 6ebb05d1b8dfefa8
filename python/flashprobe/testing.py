"""Property-test an attention kernel written in Python against the oracle, with shrinking.

    import flashprobe.testing as ft

    def my_attention(problem, q, k, v):          # numpy arrays (or torch tensors: array="torch")
        ...
        return o, lse                            # lse may be None

    def test_my_attention():
        ft.check_kernel(my_attention, head_dims=[64, 128], supports=lambda p: p.softcap == 0,
                        max_examples=200)

check_kernel draws cases from the C++ case generator through Hypothesis (flashprobe.strategies),
runs the kernel on each, and judges every output with the oracle. On a failure Hypothesis shrinks
the case, and check_kernel raises KernelCheckFailed naming the shrunk case (its problem JSON, seed
and input kind: the C++ gate makes the same inputs from them) with a one-line reproduction. A
kernel raises Unsupported for a problem it does not take; such cases are counted as refused, never
as passed, and a run in which no case was checked fails.

Budgets from the environment, as in the C++ gate: FLASHPROBE_PROP_CASES (max_examples when not
given) and FLASHPROBE_PROP_SEED (seed when not given; otherwise Hypothesis's random seed).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from . import _core
from ._cases import Case
from ._oracle import CheckResult, check
from ._problem import Problem

Kernel = Callable[[Problem, Any, Any, Any], Any]


class Unsupported(Exception):
    """Raised by a kernel for a problem it does not take: the case is refused, not run."""


class KernelCheckFailed(AssertionError):
    """A kernel failed the oracle on a case; .case is the shrunk case, .result the oracle's verdict
    (None when the kernel raised: .error)."""

    def __init__(self, message: str, case: Case, result: Optional[CheckResult], error: Optional[BaseException]):
        super().__init__(message)
        self.case = case
        self.result = result
        self.error = error


@dataclass
class KernelReport:
    """What a check_kernel run did: cases checked (and passed), refused by supports or Unsupported, and
    (backward) not bounded: judged, nothing found wrong, but a gradient's bound admitted every plausible
    gradient, so neither passed nor failed. These count the generated cases, each once, up to and
    including the first failure; the kernel's calls after it (Hypothesis shrinking the failure, looking
    for other failures and replaying the shrunk case) are calls_after_failure, never cases checked,
    refused or not bounded."""

    name: str
    checked: int = 0
    refused: int = 0
    failed: int = 0
    unbounded: int = 0
    calls_after_failure: int = 0
    seconds: float = 0.0
    seed: Optional[int] = None
    worst_margin: float = 0.0
    worst_case: Optional[str] = None
    failure: Optional[dict] = None
    by_dtype: dict = field(default_factory=dict)

    def __str__(self) -> str:
        verdict = "FAIL" if self.failed else "PASS"
        return (f"{verdict} {self.name}: {self.checked} cases checked, {self.checked - self.failed} passed, "
                f"{self.failed} failed, {self.refused} refused"
                + (f", {self.unbounded} not bounded" if self.unbounded else "")
                + (f" ({self.calls_after_failure} calls after the failure, shrinking it)" if self.calls_after_failure else "")
                + f" (worst margin {self.worst_margin:.2f}) "
                f"in {self.seconds:.1f} s")

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


_AFTER_FAILURE = [False]


def after_failure() -> bool:
    """True while check_kernel or check_backward_kernel is past its first failure: the kernel's calls then
    are Hypothesis shrinking it (KernelReport.calls_after_failure), not counted as cases. For a harness
    that wraps the kernel and keeps counts of its own (reports/baselines/torch_props.py)."""
    return _AFTER_FAILURE[0]


class _Failed(Exception):
    def __init__(self, case: Case, result: Optional[CheckResult], error: Optional[BaseException]):
        super().__init__(case.id)
        self.case, self.result, self.error = case, result, error


def _outputs(ret: Any) -> "tuple[Any, Any]":
    if isinstance(ret, (tuple, list)):
        if len(ret) != 2:
            raise TypeError(f"the kernel returned {len(ret)} values: return (o, lse) or (o, None)")
        return ret[0], ret[1]
    return ret, None


def run_case(fn: Kernel, case: Case, *, rows: int = 0, array: str = "numpy", device: Any = None,
             check_lse: bool = True) -> "tuple[CheckResult, Any, Any]":
    """Runs fn on the case's inputs and checks its output: (result, o, lse) as fn returned them.
    Raises Unsupported when fn does."""
    problem = case.problem
    (hq, hk, hv), (q, k, v) = case._inputs(array, device)
    o, lse = _outputs(fn(problem, q, k, v))
    if o is None:
        raise TypeError("the kernel returned no output (o is None)")
    # Judged on the inputs as generated (numpy, read-only), whatever the kernel did to its own copies.
    return check(problem, hq, hk, hv, o, lse if check_lse else None, rows=rows, seed=case.seed), o, lse


def reproduction(fn: Kernel, case: Case) -> str:
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "kernel"))
    return f"flashprobe.testing.replay({name}, {case.to_json()!r})"


def replay(fn: Kernel, case: "Case | str | dict", *, rows: int = 0, array: str = "numpy", device: Any = None,
           check_lse: bool = True) -> CheckResult:
    """Runs fn on one case again (a Case, or its JSON as a failure printed it) and returns the oracle's
    verdict."""
    if not isinstance(case, Case):
        case = Case.from_json(case)
    return run_case(fn, case, rows=rows, array=array, device=device, check_lse=check_lse)[0]


def _dense_bshd(x: Any, name: str, bhsd: bool) -> np.ndarray:
    """An array as `flashprobe check` reads it: host numpy, dense BSHD, bf16 as uint16 bit patterns."""
    from ._arrays import host

    a, _ = host(x, name)
    if type(a).__module__.split(".")[0] == "torch":
        if str(a.dtype) == "torch.bfloat16":
            import torch

            a = a.view(torch.int16)
        a = a.numpy()
    a = np.asarray(a)
    if a.dtype.name == "bfloat16":
        a = a.view(np.uint16)
    if a.ndim == 4 and bhsd:
        a = a.transpose(0, 2, 1, 3)
    return np.ascontiguousarray(a)


def save_case(directory: "str | os.PathLike", case: Case, o: Any, lse: Any = None) -> str:
    """Writes the case as `flashprobe check` reads it (problem.json, case.json, q/k/v/o[/lse].npy, dense
    BSHD; bf16 as uint16 bit patterns) and returns the command line that re-checks it."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    problem = case.problem
    dense = {f: v for f, v in problem.to_dict().items() if not f.endswith("_strides")}
    (d / "problem.json").write_text(json.dumps(dense, indent=1) + "\n")
    (d / "case.json").write_text(case.to_json() + "\n")
    q, k, v = case.arrays("numpy")

    layouts = problem.tensor_layouts
    for name, x, tensor in (("q", q, "Q"), ("k", k, "K"), ("v", v, "V"), ("o", o, "O")):
        np.save(d / f"{name}.npy", _dense_bshd(x, tensor, layouts[name] == "bhsd"))
    cmd = (f"flashprobe check --problem {d}/problem.json --q {d}/q.npy --k {d}/k.npy --v {d}/v.npy "
           f"--o {d}/o.npy")
    if lse is not None:
        np.save(d / "lse.npy", _dense_bshd(lse, "LSE", False).astype(np.float32))
        cmd += f" --lse {d}/lse.npy"
    return cmd + f" --json {d}/check.json"


def _env_int(name: str) -> Optional[int]:
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise _core.UsageError(f"{name}='{v}' is not an integer") from None


def check_kernel(fn: Kernel, *, supports: Optional[Callable[[Problem], bool]] = None,
                 max_examples: Optional[int] = None, seed: Optional[int] = None, rows: int = 0,
                 array: str = "numpy", device: Any = None, check_lse: bool = True, size: int = 100,
                 name: Optional[str] = None, failure_dir: "str | os.PathLike | None" = None,
                 settings: Any = None, **constraints: Any) -> KernelReport:
    """Property-tests fn(problem, q, k, v) -> (o, lse | None) against the oracle (see the module doc).

    supports      predicate on Problem; problems it refuses are not drawn (as the C++ gate's domain)
    max_examples  cases to check (default FLASHPROBE_PROP_CASES, else 100)
    seed          Hypothesis seed (default FLASHPROBE_PROP_SEED, else random): the same seed draws the
                  same cases
    rows          > 0: check that many sampled query rows per case (long problems)
    array         "numpy" (read-only arrays; bf16 as ml_dtypes.bfloat16 when installed, else uint16
                  bit patterns) or "torch" (tensors on `device`)
    check_lse     judge the LSE the kernel returns (False: O only)
    failure_dir   where to save the shrunk failing case as NPY files for `flashprobe check`
    settings      a hypothesis.settings to start from (deadline and database are set here)
    constraints   the generator's domain: head_dims, dtypes, max_sq, causal, windows, ... (see
                  flashprobe.strategies)
    Returns a KernelReport when every case passed; raises KernelCheckFailed with the shrunk case.
    """
    max_examples, seed = _budget(max_examples, seed)
    report = KernelReport(name=name or getattr(fn, "__qualname__", "kernel"), seed=seed)

    def judge(case: Case) -> tuple:
        result, _, _ = run_case(fn, case, rows=rows, array=array, device=device, check_lse=check_lse)
        return result, max(result.margin, result.lse_margin or 0.0)

    return _run_property(judge, report, max_examples, seed, settings, supports, size, constraints,
                         lambda f: _failure(fn, report, f, rows, array, device, check_lse, failure_dir))


def _budget(max_examples: Optional[int], seed: Optional[int]) -> "tuple[int, Optional[int]]":
    """max_examples and seed, from FLASHPROBE_PROP_CASES and FLASHPROBE_PROP_SEED where not given."""
    if max_examples is None:
        max_examples = _env_int("FLASHPROBE_PROP_CASES") or 100
    if seed is None:
        seed = _env_int("FLASHPROBE_PROP_SEED")
    return max_examples, seed


def _run_property(judge: Callable[[Case], tuple], report: KernelReport, max_examples: int, seed: Optional[int],
                  settings: Any, supports: Any, size: int, constraints: dict,
                  on_failure: Callable[["_Failed"], BaseException]) -> KernelReport:
    """Draws cases through Hypothesis from the C++ generator and judges each: judge(case) -> (the
    verdict, its margin), raising Unsupported to refuse the case. Counts checked, refused, not bounded
    (a verdict with bounded False and failed False: neither passed nor failed) and the worst margin in
    `report`; a failing verdict or an exception is shrunk, then on_failure(the failure) is raised. No
    case checked is a failure too."""
    from hypothesis import HealthCheck, given, reject
    from hypothesis import seed as hyp_seed
    from hypothesis import settings as hyp_settings
    from hypothesis.errors import FailedHealthCheck, Unsatisfiable

    from .strategies import cases

    base = settings if settings is not None else hyp_settings()
    suppressed = set(base.suppress_health_check) | {HealthCheck.too_slow, HealthCheck.data_too_large}
    run_settings = hyp_settings(base, max_examples=max_examples, deadline=None, database=None,
                                suppress_health_check=list(suppressed))

    def prop(case: Case) -> None:
        # Counted: the cases generated up to the first failure, each once. After it Hypothesis shrinks the
        # failure (and, before that, may look for other failures a while): no call then is counted as a case.
        counted = not _AFTER_FAILURE[0]
        report.calls_after_failure += not counted
        try:
            result, margin = judge(case)
        except Unsupported:
            report.refused += counted
            reject()
        except Exception as e:  # the kernel, or its output's shape/dtype: a failure of this case
            _AFTER_FAILURE[0] = True
            raise _Failed(case, None, e) from e
        if getattr(result, "bounded", True) is False and not result.failed:
            report.unbounded += counted  # judged, nothing wrong found, nothing proved: not counted as checked
            return
        if counted:
            report.checked += 1
            dt = case.problem.dtype
            report.by_dtype[dt] = report.by_dtype.get(dt, 0) + 1
            if margin > report.worst_margin or report.worst_case is None:
                report.worst_margin, report.worst_case = margin, case.id
        if not result.passed:
            _AFTER_FAILURE[0] = True
            raise _Failed(case, result, None)

    test = run_settings(given(cases(supports=supports, size=size, **constraints))(prop))
    if seed is not None:
        test = hyp_seed(seed)(test)
    t0 = time.perf_counter()
    _AFTER_FAILURE[0] = False
    try:
        test()
    except _Failed as f:
        report.seconds = time.perf_counter() - t0
        report.failed = 1
        raise on_failure(f) from None  # (its call of the kernel to save the case is no generated case either)
    except (FailedHealthCheck, Unsatisfiable) as e:
        # Hypothesis gave up drawing: the kernel (or supports) refused nearly everything.
        if report.checked == 0:
            raise _nothing_checked(report) from e
        raise
    finally:
        _AFTER_FAILURE[0] = False
    report.seconds = time.perf_counter() - t0
    if report.checked == 0:
        raise _nothing_checked(report)
    return report


def _nothing_checked(report: KernelReport) -> KernelCheckFailed:
    return KernelCheckFailed(f"{report.name}: no case was checked ({report.refused} refused by the kernel, "
                             f"{report.unbounded} not bounded, the rest "
                             "by supports): the kernel takes none of the generated problems; widen the constraints",
                             None, None, None)


def _failure(fn: Kernel, report: KernelReport, f: _Failed, rows: int, array: str, device: Any, check_lse: bool,
             failure_dir: Any) -> KernelCheckFailed:
    case = f.case
    lines = [f"{report.name} failed the oracle check; the case shrunk by Hypothesis (after {report.checked} "
             f"cases checked, {report.refused} refused):"]
    if f.result is not None:
        lines.append("  " + f.result.summary)
    else:
        lines.append(f"  the kernel raised {type(f.error).__name__}: {f.error}")
    lines.append(f"  case: {case.to_json()}")
    lines.append(f"  reproduce: {reproduction(fn, case)}")
    if failure_dir is not None and f.result is not None:
        try:
            q, k, v = case.arrays(array, device)
            o, lse = _outputs(fn(case.problem, q, k, v))
            lines.append(f"  saved; re-check with: {save_case(Path(failure_dir) / case.id, case, o, lse if check_lse else None)}")
        except Exception as e:  # noqa: BLE001 - the report must still come out
            lines.append(f"  (could not save the case: {type(e).__name__}: {e})")
    report.failure = {"case": json.loads(case.to_json()), "summary": f.result.summary if f.result else None,
                      "error": None if f.error is None else f"{type(f.error).__name__}: {f.error}",
                      "record": f.result.record if f.result else None}
    err = KernelCheckFailed("\n".join(lines), case, f.result, f.error)
    err.report = report
    return err


# ---------------------------------------------------------------- backward
# A backward subject: fn(problem, q, k, v, do) -> (o, lse | None, dq, dk, dv), the forward it ran and
# the gradients of sum(do * o) (a framework's autograd runs both). The O it returns is the forward the
# gradient check trusts (oracle/grad_check.h): its own errors are the forward check's (check_kernel).
BackwardKernel = Callable[[Problem, Any, Any, Any, Any], Any]


def upstream_gradient(case: Case, array: str = "numpy", device: Any = None) -> Any:
    """dO of a case: N(0, 1) drawn from the case's seed, in out_dtype, in O's layout (numpy, or torch on
    `device`). The same case gives the same dO."""
    from ._arrays import BFLOAT16

    p = case.problem
    shape = (p.batch, p.hq, p.sq, p.dv) if p.tensor_layouts["o"] == "bhsd" else (p.batch, p.sq, p.hq, p.dv)
    # float32 first: torch and numpy then round the same float32 values to nearest even.
    x = np.random.default_rng([case.seed, 0x64_6f]).standard_normal(shape).astype(np.float32)
    if array == "torch":
        import torch

        dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[p.out_dtype]
        return torch.from_numpy(x).to(dtype=dt, device=device)
    if p.out_dtype == "bf16":
        if BFLOAT16 is not None:
            return x.astype(BFLOAT16)
        b = x.view(np.uint32).astype(np.uint64)
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)  # the bit patterns, to nearest even
    return x.astype({"f16": np.float16, "f32": np.float32}[p.out_dtype])


def _backward_outputs(ret: Any) -> tuple:
    if not isinstance(ret, (tuple, list)) or len(ret) != 5:
        raise TypeError("a backward subject returns (o, lse | None, dq, dk, dv)")
    return tuple(ret)


def run_backward_case(fn: BackwardKernel, case: Case, *, array: str = "numpy", device: Any = None,
                      check_lse: bool = True) -> "tuple[Any, tuple]":
    """Runs fn on the case's inputs and upstream gradient and checks its gradients: (the
    BackwardCheckResult, fn's outputs). Raises Unsupported when fn does."""
    from ._oracle import check_backward

    problem = case.problem
    (hq, hk, hv), (q, k, v) = case._inputs(array, device)
    do = upstream_gradient(case, array, device)
    out = _backward_outputs(fn(problem, q, k, v, do))
    o, lse, dq, dk, dv = out
    if o is None or (dq is None and dk is None and dv is None):
        raise TypeError("the backward subject returned no O or no gradient")
    r = check_backward(problem, hq, hk, hv, upstream_gradient(case), dq, dk, dv, o=o, lse=lse if check_lse else None)
    return r, out


def save_backward_case(directory: "str | os.PathLike", case: Case, out: tuple) -> str:
    """save_case plus do/dq/dk/dv.npy: the command line that re-checks the gradients (and the forward O)."""
    o, lse, dq, dk, dv = out
    cmd = save_case(directory, case, o, lse).rsplit(" --json ", 1)[0]
    d = Path(directory)
    layouts = case.problem.tensor_layouts
    grads = (("do", upstream_gradient(case), "dO", "o"), ("dq", dq, "dQ", "q"), ("dk", dk, "dK", "k"), ("dv", dv, "dV", "v"))
    for name, x, tensor, like in grads:
        if x is not None:
            np.save(d / f"{name}.npy", _dense_bshd(x, tensor, layouts[like] == "bhsd"))
            cmd += f" --{name} {d}/{name}.npy"
    return cmd + f" --json {d}/check.json"


def check_backward_kernel(fn: BackwardKernel, *, supports: Optional[Callable[[Problem], bool]] = None,
                          max_examples: Optional[int] = None, seed: Optional[int] = None, array: str = "numpy",
                          device: Any = None, check_lse: bool = True, size: int = 100, name: Optional[str] = None,
                          failure_dir: "str | os.PathLike | None" = None, settings: Any = None,
                          **constraints: Any) -> KernelReport:
    """Property-tests a backward: fn(problem, q, k, v, do) -> (o, lse | None, dq, dk, dv), every case's
    gradients judged by check_backward (BACKWARD_TOLERANCE.md), with dO drawn from the case's seed
    (upstream_gradient). As check_kernel otherwise: Hypothesis draws from the C++ generator and shrinks
    a failure, Unsupported refuses a case (never passed), KernelCheckFailed names the shrunk case and,
    with failure_dir, the `flashprobe check --do --dq --dk --dv` command that re-checks it;
    worst_margin is the largest gradient margin."""
    max_examples, seed = _budget(max_examples, seed)
    report = KernelReport(name=name or getattr(fn, "__qualname__", "backward"), seed=seed)

    def judge(case: Case) -> tuple:
        result, _ = run_backward_case(fn, case, array=array, device=device, check_lse=check_lse)
        return result, max(m for m in (result.dq_margin, result.dk_margin, result.dv_margin, 0.0) if m is not None)

    def failure(f: _Failed) -> KernelCheckFailed:
        lines = [f"{report.name} failed the gradient check; the case shrunk by Hypothesis (after {report.checked} "
                 f"cases checked, {report.refused} refused):",
                 "  " + (f.result.summary if f.result is not None else f"the subject raised {type(f.error).__name__}: {f.error}"),
                 f"  case: {f.case.to_json()}"]
        if failure_dir is not None and f.result is not None:
            try:
                _, out = run_backward_case(fn, f.case, array=array, device=device, check_lse=check_lse)
                lines.append(f"  saved; re-check with: {save_backward_case(Path(failure_dir) / f.case.id, f.case, out)}")
            except Exception as e:  # noqa: BLE001 - the report must still come out
                lines.append(f"  (could not save the case: {type(e).__name__}: {e})")
        report.failure = {"case": json.loads(f.case.to_json()), "summary": f.result.summary if f.result else None,
                          "error": None if f.error is None else f"{type(f.error).__name__}: {f.error}",
                          "record": f.result.record if f.result else None}
        err = KernelCheckFailed("\n".join(lines), f.case, f.result, f.error)
        err.report = report
        return err

    return _run_property(judge, report, max_examples, seed, settings, supports, size, constraints, failure)
