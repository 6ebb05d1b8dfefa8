"""This build's own attention kernels (mma, wgmma, decode, tiled, ref3pass) as Python callables.

    import flashprobe.kernels as fk
    import flashprobe.testing as ft
    ft.check_kernel(fk.kernel("mma"), max_examples=500)     # the C++ gate's kernel, from Python

A kernel runs through the C++ host runner (guarded buffers, poisoned outputs, inputs checked
unchanged): a guard band written, an output element left unwritten or an input modified raises
KernelDirty. Problems the kernel does not support raise flashprobe.testing.Unsupported with its
reason. Running needs a GPU build of the package (pip install . -C cmake.define.FLASHPROBE_GPU=cuda)
and a GPU; otherwise flashprobe.NoDevice is raised. names() works in every build.
"""
from __future__ import annotations

from typing import Any, Callable

from . import _core
from ._arrays import host, numpy_view
from ._problem import Problem

NoDevice = _core.NoDevice


class KernelDirty(AssertionError):
    """The runner saw a kernel write outside its outputs, leave outputs unwritten or change inputs."""


def names() -> "list[str]":
    return [name for name, _ in _core.kernel_list()]


def describe() -> "dict[str, str]":
    return dict(_core.kernel_list())


def supports(name: str, problem: Problem) -> "tuple[bool, str]":
    """(ok, reason) for this machine's first GPU."""
    return _core.kernel_supports(name, problem._p)


def kernel(name: str) -> Callable[[Problem, Any, Any, Any], "tuple[Any, Any]"]:
    """The kernel as fn(problem, q, k, v) -> (o, lse), numpy in and out (o in the problem's layout)."""
    from .testing import Unsupported

    if name not in names():
        raise _core.UsageError(f"unknown kernel '{name}' (this build has: {', '.join(names())})")

    def run(problem: Problem, q: Any, k: Any, v: Any):
        ok, reason = supports(name, problem)
        if not ok:
            raise Unsupported(reason)
        arrays, bf16 = {}, []
        for n, x in (("Q", q), ("K", k), ("V", v)):
            arrays[n], is_bf16 = host(x, n)
            if is_bf16:
                bf16.append(n)
        (flat, shape, strides), lse, clean, findings = _core.kernel_run(name, problem._p, arrays["Q"], arrays["K"],
                                                                        arrays["V"], bf16)
        if not clean:
            raise KernelDirty(f"{name} on {problem.id}: {findings}")
        return numpy_view(flat, shape, strides, problem.out_dtype), lse

    run.__name__ = run.__qualname__ = f"flashprobe_{name}"
    return run
