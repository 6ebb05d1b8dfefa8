"""Cases of the C++ case generator (proptests/cases.h): a problem, an input seed and an input kind."""
from __future__ import annotations

from typing import Any, Callable, Optional

from . import _core
from ._arrays import numpy_view, torch_view
from ._problem import Problem

INPUT_KINDS = tuple(_core.input_kinds())
DOMAIN_FIELDS = tuple(_core.DOMAIN_FIELDS)


def domain(**constraints: Any) -> "_core.Domain":
    """The C++ Domain with these fields set (head_dims, dtypes, max_sq, causal, windows, ...); every
    other field keeps the C++ default."""
    d = _core.Domain()
    for name, value in constraints.items():
        if name not in DOMAIN_FIELDS:
            raise _core.UsageError(f"unknown constraint '{name}' (known: {', '.join(DOMAIN_FIELDS)}, and supports)")
        if name in ("head_dims", "dtypes"):
            value = list(value)
        setattr(d, name, value)
    return d


class Case:
    """One generated case: problem, seed and input kind, which fix the inputs bit for bit (the C++
    gate makes the same inputs from the same three). JSON: {"problem": {...}, "seed": N, "inputs": K}."""

    __slots__ = ("_c",)

    def __init__(self, problem: Problem, seed: int = 0, inputs: str = "normal"):
        self._c = _core.Case(problem._p, seed, inputs)

    @classmethod
    def _wrap(cls, c: "_core.Case") -> "Case":
        out = cls.__new__(cls)
        out._c = c
        return out

    @classmethod
    def from_json(cls, source: "str | dict") -> "Case":
        return cls._wrap(_core.Case.read(source))

    def to_json(self) -> str:
        return self._c.to_json()

    @property
    def problem(self) -> Problem:
        return Problem._wrap(self._c.problem)

    @property
    def seed(self) -> int:
        return self._c.seed

    @property
    def inputs(self) -> str:
        """The input kind: normal, large (scores near the fp16 range), nearkeys, rising, logits (past it)."""
        return self._c.inputs

    @property
    def id(self) -> str:
        return self._c.id()

    def arrays(self, array: str = "numpy", device: Any = None) -> tuple:
        """Q, K, V in the problem's layout (strided views where the problem's strides are: a fused
        QKV buffer, BHSD), as read-only numpy arrays (bf16 as ml_dtypes.bfloat16 when installed, else
        uint16 bit patterns) or, with array="torch", as torch tensors on `device`."""
        return self._inputs(array, device)[1]

    def _inputs(self, array: str, device: Any) -> "tuple[tuple, tuple]":
        """(the numpy arrays, the arrays as asked), made once."""
        if array not in ("numpy", "torch"):
            raise _core.UsageError(f"array='{array}' is not one of numpy, torch")
        dtype = self.problem.dtype
        parts = self._c.make_inputs()
        host = tuple(numpy_view(flat, shape, strides, dtype) for flat, shape, strides in parts)
        if array == "numpy":
            return host, host
        return host, tuple(torch_view(flat, shape, strides, dtype, device) for flat, shape, strides in parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Case) and self._c == other._c

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __repr__(self) -> str:
        return f"flashprobe.Case.from_json({self.to_json()!r})"


def generate_case(seed: int, size: int = 100, supports: Optional[Callable[[Problem], bool]] = None,
                  **constraints: Any) -> Case:
    """A case from a seed alone: the C++ generator's draws from a seeded stream (SeededChoices), each
    range scaled to size/100 as RapidCheck scales it. supports, if given, re-draws refused problems
    (as the domain's predicate does in C++)."""
    d = domain(**constraints)
    if supports is not None:
        d.supports = lambda p: bool(supports(Problem._wrap(p)))
    return Case._wrap(_core.generate_case(d, seed, size))
