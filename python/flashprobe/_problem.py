"""flashprobe.Problem: one attention problem, read and validated by the C++ reader."""
from __future__ import annotations

import json
from typing import Any

from . import _core

# The fields as the C++ writer names them, in its order (a default problem's JSON has them all but
# the strides, which it writes only when set).
_STRIDE_FIELDS = ("q_strides", "k_strides", "v_strides", "o_strides")
_FIELDS = tuple(json.loads(_core.Problem.read({}).to_json())) + _STRIDE_FIELDS
_DEFAULTS = json.loads(_core.Problem.read({}).to_json())


class Problem:
    """One attention forward problem (core/problem.h, docs/attention-semantics.md).

    Problem(batch=1, hq=1, hkv=1, sq=1, sk=1, d=64, dv=None, dtype="f16", out_dtype=None, scale=0,
            causal="none", kv_offset=0, window_left=-1, window_right=-1, softcap=0, alibi_slopes=(),
            seqlens_k=(), layout=None, q_strides=None, k_strides=None, v_strides=None, o_strides=None)

    The keyword arguments are read as the problem JSON of `flashprobe check --problem` is, by the same
    C++ reader and validation, so a wrong name, type or value raises flashprobe.UsageError (a
    ValueError) with the CLI's message. dv=None means d; out_dtype=None means dtype. Arrays for a
    problem are [B, S, H, D]; layout="bhsd" (or a tensor's BHSD strides) makes that tensor
    [B, H, S, D]. Problems are immutable: replace(**changes) gives a changed copy.
    """

    __slots__ = ("_p", "_fields")

    def __init__(self, **fields: Any):
        given = {k: v for k, v in fields.items() if v is not None}
        self._set(_core.Problem.read(given))

    def _set(self, p: "_core.Problem") -> None:
        object.__setattr__(self, "_p", p)
        object.__setattr__(self, "_fields", json.loads(p.to_json()))

    @classmethod
    def _wrap(cls, p: "_core.Problem") -> "Problem":
        out = cls.__new__(cls)
        out._set(p)
        return out

    @classmethod
    def from_json(cls, source: "str | bytes | dict") -> "Problem":
        """A problem from its JSON text (or a dict of it), as `flashprobe check --problem` reads it."""
        return cls._wrap(_core.Problem.read(source))

    def to_json(self) -> str:
        """The problem as JSON, as the C++ writer gives it (what from_json and the CLI read)."""
        return self._p.to_json()

    def to_dict(self) -> dict:
        return json.loads(self._p.to_json())

    def replace(self, **changes: Any) -> "Problem":
        """A copy with some fields changed, validated again."""
        d = self.to_dict()
        d.update(changes)
        return Problem.from_json({k: v for k, v in d.items() if v is not None})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _FIELDS:
            value = self._fields.get(name)
            return tuple(value) if isinstance(value, list) else value
        raise AttributeError(f"Problem has no field {name!r} (fields: {', '.join(_FIELDS)})")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Problem is immutable: use problem.replace({name}=...)")

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(_FIELDS))

    @property
    def id(self) -> str:
        """The case id every record uses (b1_hq8_hkv2_sq1_sk8_d64_f16_causal_off7, ...)."""
        return self._p.id()

    @property
    def layout(self) -> str:
        """'bshd', 'bhsd' (every tensor contiguous BHSD: arrays [B, H, S, D]) or 'strided'."""
        layouts = set(self._p.tensor_layouts())
        return layouts.pop() if len(layouts) == 1 else "strided"

    @property
    def tensor_layouts(self) -> "dict[str, str]":
        """Per tensor (q, k, v, o): 'bshd', 'bhsd' (its arrays are [B, H, S, D]) or 'strided'."""
        return dict(zip("qkvo", self._p.tensor_layouts()))

    @property
    def empty_rows(self) -> int:
        """Query rows, over every batch element, that see no key (they get O = 0, LSE = -inf)."""
        return self._p.empty_rows()

    def visible_range(self, b: int, i: int) -> "tuple[int, int]":
        """The keys [lo, hi] that query row i of batch element b sees (empty when lo > hi)."""
        return self._p.visible_range(b, i)

    def diag_offset(self, b: int) -> int:
        """The diagonal of batch element b: key i + diag_offset(b) is query row i's own position."""
        return self._p.diag_offset(b)

    @property
    def effective_scale(self) -> float:
        return self._p.effective_scale()

    def warnings(self) -> "list[str]":
        """What validation remarks beyond errors (rows that see no key, ...), as messages."""
        return [f"{field}: {msg}" for sev, field, msg in self._p.issues() if sev == "warning"]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Problem) and self._p == other._p

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __repr__(self) -> str:
        # Only what differs from the defaults: the shortest call that makes this problem again.
        parts = []
        for k, v in self._fields.items():
            if k in _DEFAULTS and _DEFAULTS[k] == v:
                continue
            if k == "dv" and v == self._fields["d"]:
                continue
            if k == "out_dtype" and v == self._fields["dtype"]:
                continue
            parts.append(f"{k}={v!r}")
        return f"Problem({', '.join(parts)})"
