"""The README's "property-test your kernel from pytest" example, run as written: its Python block (at most
ten lines of code) is executed with `my_kernel` bound to a user's kernel (numpy, [B, S, H, D], GQA by the
shapes, the causal mask by name), and its test function must pass on a correct kernel and fail, with a
shrunk case, on one whose causal diagonal is always the top-left one."""
import re
from pathlib import Path

import numpy as np
import pytest

import flashprobe.testing as ft

README = Path(__file__).resolve().parents[2] / "README.md"


def example():
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^## Python: .*?\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, "README.md has no '## Python: ...' section"
    blocks = re.findall(r"```python\n(.*?)```", m.group(1), re.S)
    assert len(blocks) == 1, f"the section has {len(blocks)} python blocks, expected 1"
    return blocks[0]


def user_kernel(top_left_always=False):
    def my_kernel(q, k, v, causal, scale):
        dtype = q.dtype
        q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
        B, Sq, Hq, _ = q.shape
        Sk, Hkv = k.shape[1], k.shape[2]
        k, v = np.repeat(k, Hq // Hkv, axis=2), np.repeat(v, Hq // Hkv, axis=2)
        s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
        if causal != "none":
            off = Sk - Sq if causal == "bottom_right" and not top_left_always else 0
            s = np.where(np.arange(Sk)[None, :] <= np.arange(Sq)[:, None] + off, s, -np.inf)
        m = s.max(axis=-1, keepdims=True) if Sk else np.full((B, Hq, Sq, 1), -np.inf)
        m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(s - m)
        l = e.sum(axis=-1, keepdims=True)
        o = np.einsum("bhqk,bkhd->bqhd", e / np.where(l > 0, l, 1.0), v)
        lse = np.where(l[..., 0] > 0, m[..., 0] + np.log(np.where(l[..., 0] > 0, l[..., 0], 1.0)), -np.inf)
        return o.astype(dtype), lse.astype(np.float32)

    return my_kernel


def run_example(kernel):
    ns = {"my_kernel": kernel}
    exec(compile(example(), str(README), "exec"), ns)
    ns["test_my_attention"]()


def test_the_example_is_ten_lines_at_most():
    code = [ln for ln in example().splitlines() if ln.strip()]
    assert len(code) <= 10, "\n".join(code)


def test_the_example_passes_a_correct_kernel():
    run_example(user_kernel())


def test_the_example_catches_and_shrinks_a_wrong_causal_diagonal():
    with pytest.raises(ft.KernelCheckFailed) as e:
        run_example(user_kernel(top_left_always=True))
    p = e.value.case.problem
    assert p.causal == "bottom_right" and p.sq != p.sk, p
    assert "reproduce: flashprobe.testing.replay(" in str(e.value)
