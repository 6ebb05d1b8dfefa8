"""flashprobe for Python: the attention oracle, the case generator and the property gate of the C++
toolkit (one implementation: this package binds it).

    import flashprobe
    p = flashprobe.Problem(batch=2, hq=8, hkv=2, sq=128, sk=300, d=64, dtype="bf16", causal="bottom_right")
    result = flashprobe.check(p, q, k, v, o, lse)      # numpy arrays or torch tensors
    assert result.passed, result.summary
    grads = flashprobe.check_backward(p, q, k, v, do, dq, dk, dv, o=o, lse=lse)   # the gradients

flashprobe.strategies holds Hypothesis strategies (problems, inputs, cases) drawn by the C++
generator; flashprobe.testing.check_kernel property-tests a Python kernel with shrinking;
flashprobe.kernels runs this build's own kernels (in a GPU build).
"""
from ._core import NoDevice, UsageError
from ._core import backend as _backend
from ._core import commit as _commit
from ._core import version as __version__
from ._cases import INPUT_KINDS, Case, generate_case
from ._oracle import BackwardCheckResult, CheckResult, check, check_backward, reference
from ._problem import Problem

__all__ = ["Problem", "check", "check_backward", "reference", "CheckResult", "BackwardCheckResult", "Case", "generate_case", "INPUT_KINDS", "UsageError",
           "NoDevice", "build_info"]


def build_info() -> dict:
    """The C++ build this package holds: version, commit, GPU backend (as every record names them)."""
    return {"version": __version__, "commit": _commit, "backend": _backend}
