"""Hypothesis strategies for attention problems and their inputs, drawn by the C++ case generator.

The distribution is the C++ gate's (proptests/cases.h: the edge lengths, GQA ratios, masks,
windows on tile edges, per-batch key lengths, strides, input kinds and their weights); Hypothesis
only supplies each choice the C++ draw asks for (an integer in a range) and shrinks those choices
toward the low end of each range, where the C++ draw puts the simplest option. So a shrunk failure
is a case the C++ gate draws too, and its problem JSON, seed and input kind make the same inputs
there bit for bit.

    from hypothesis import given
    from flashprobe.strategies import problems, inputs, cases

    @given(cases(head_dims=[64], dtypes=["bf16"]))
    def test_my_kernel(case):
        q, k, v = case.arrays()
        ...

Constraints are the C++ Domain's fields: head_dims, any_head_dim, dv_differs, dtypes, tile_m,
tile_n, max_sq, max_sk, max_batch, max_hq, causal, top_left, windows, softcap, alibi, window_odds,
edge_windows, seqlens, strides, kv_offset, sk_zero; plus supports (a predicate on Problem: refused
problems are rejected, as in the C++ gate) and size (the C++ size budget, 100 by default: Sq up to
max_sq, Sk up to max_sk).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from hypothesis import assume
from hypothesis import strategies as st

from . import _core
from ._cases import Case, domain
from ._problem import Problem

_U64 = (1 << 64) - 1


def _in_range(draw):
    return lambda lo, hi: draw(st.integers(lo, hi - 1))


@st.composite
def _problems(draw, d: "_core.Domain", size: int, supports: Optional[Callable[[Problem], bool]]) -> Problem:
    p = _core.draw_problem(d, _in_range(draw), size)
    assume(_core.accepts(d, p))
    problem = Problem._wrap(p)
    if supports is not None:
        assume(bool(supports(problem)))
    return problem


def problems(*, supports: Optional[Callable[[Problem], bool]] = None, size: int = 100, **constraints: Any):
    """Problems drawn by the C++ generator within the constraints (see the module's doc)."""
    return _problems(domain(**constraints), size, supports)


class Inputs(tuple):
    """(q, k, v) for a problem, made by the C++ generator from (seed, kind); .case names them."""

    case: Case

    def __new__(cls, case: Case, array: str = "numpy", device: Any = None):
        out = super().__new__(cls, case.arrays(array, device))
        out.case = case
        return out

    def __repr__(self) -> str:
        return f"Inputs(seed={self.case.seed}, kind={self.case.inputs!r})"


@st.composite
def _cases(draw, problem_strategy, array: str, device: Any) -> Case:
    problem = problem_strategy if isinstance(problem_strategy, Problem) else draw(problem_strategy)
    c = _core.draw_inputs(problem._p, _in_range(draw), lambda: draw(st.integers(0, _U64)))
    return Case._wrap(c)


def inputs(problem: Problem, *, array: str = "numpy", device: Any = None):
    """Inputs (q, k, v) for this problem: a seed and an input kind (normal, large, nearkeys, rising, logits)
    drawn with the C++ generator's weights, the arrays made from them by the C++ side."""
    return _cases(problem, array, device).map(lambda c: Inputs(c, array, device))


def cases(*, supports: Optional[Callable[[Problem], bool]] = None, size: int = 100, **constraints: Any):
    """Whole cases (problem, seed, input kind): what flashprobe.testing.check_kernel draws."""
    return _cases(problems(supports=supports, size=size, **constraints), "numpy", None)
