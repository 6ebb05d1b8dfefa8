"""flashprobe.check and flashprobe.reference on every array type and dtype, and their errors."""
import json

import numpy as np
import pytest

import flashprobe
from flashprobe import Case, Problem, UsageError
from flashprobe._arrays import BFLOAT16

from attention_numpy import correct

needs_ml_dtypes = pytest.mark.skipif(BFLOAT16 is None, reason="ml_dtypes is not installed")


def case_of(dtype="f16", layout=None, **fields):
    p = dict(batch=2, hq=4, hkv=2, sq=9, sk=17, d=32, dtype=dtype, causal="bottom_right")
    p.update(fields)
    problem = Problem(layout=layout, **p)
    return Case(problem, seed=11)


def outputs(case):
    q, k, v = case.arrays()
    o, lse = correct(case.problem, q, k, v)
    return q, k, v, o, lse


def bits(a):
    """bf16 (ml_dtypes) arrays as their uint16 patterns; others unchanged."""
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_a_correct_output_passes_and_a_wrong_one_fails(dtype):
    c = case_of(dtype)
    q, k, v, o, lse = outputs(c)
    r = flashprobe.check(c.problem, q, k, v, o, lse)
    assert r.passed, r.summary
    assert 0 <= r.margin <= 1 and 0 <= r.lse_margin <= 1 and r.lse_checked
    assert r.case_id == c.problem.id and r.rows_checked == r.rows_total == 9
    wrong = o.astype(np.float64)
    wrong[1, 3, 2, 5] += 0.25
    bad = flashprobe.check(c.problem, q, k, v, wrong.astype(o.dtype), lse)
    assert not bad.passed and "exceeds the bound" in bad.reason
    assert bad.metrics["worst"] == "b1 row3 h2 x5"
    assert bad.margin > 1


def test_the_record_is_the_cli_record():
    c = case_of()
    r = flashprobe.check(c.problem, *outputs(c))
    rec = r.record
    assert rec["schema"] == "flashprobe.check/1" and rec["pass"] is True
    assert rec["commit"] == flashprobe.build_info()["commit"]
    assert rec["problem"] == c.problem.to_dict()
    for key in ("metrics", "emulated_metrics", "o", "lse", "tolerance", "rows_checked", "case_id", "reason"):
        assert key in rec, key
    assert rec["metrics"] == r.metrics and rec["o"]["margin"] == pytest.approx(r.margin)
    json.dumps(rec)  # plain JSON values


def test_the_cli_gives_the_same_verdict_on_the_same_arrays(cli, tmp_path):
    from flashprobe.testing import save_case

    for dtype in ("f16", "bf16"):
        c = case_of(dtype, layout="bhsd")
        q, k, v, o, lse = outputs(c)
        o = o.copy()
        o[0, 1, 2, 3] = o[0, 1, 2, 3] * 2 + 0.5  # a planted error, so both report a failure
        r = flashprobe.check(c.problem, q, k, v, o, lse)
        cmd = save_case(tmp_path / dtype, c, o, lse)
        out = cli(*cmd.split()[1:])
        assert out.returncode == 1, out.stdout + out.stderr
        rec = json.loads((tmp_path / dtype / "check.json").read_text())
        assert rec["pass"] is False and not r.passed
        assert rec["o"]["error"] == pytest.approx(r.record["o"]["error"], rel=0, abs=0)
        assert rec["o"]["bound"] == pytest.approx(r.record["o"]["bound"], rel=1e-12)
        assert rec["metrics"]["worst"] == "b0 row2 h1 x3" == r.metrics["worst"]


@needs_ml_dtypes
@pytest.mark.parametrize("form", ["ml_dtypes", "uint16", "int16"])
def test_bf16_as_ml_dtypes_or_bit_patterns(form):
    c = case_of("bf16")
    q, k, v, o, lse = outputs(c)
    conv = {"ml_dtypes": lambda a: a, "uint16": bits, "int16": lambda a: bits(a).view(np.int16)}[form]
    r = flashprobe.check(c.problem, conv(q), conv(k), conv(v), conv(o), lse)
    assert r.passed, r.summary
    assert r.margin == flashprobe.check(c.problem, q, k, v, o, lse).margin


def test_bhsd_arrays_for_a_bhsd_problem_and_the_shape_error_otherwise():
    c = case_of(layout="bhsd")
    q, k, v, o, lse = outputs(c)
    assert q.shape == (2, 4, 9, 32) and o.shape == (2, 4, 9, 32)
    assert flashprobe.check(c.problem, q, k, v, o, lse).passed
    bshd = c.problem.replace(layout="bshd", q_strides=None, k_strides=None, v_strides=None, o_strides=None)
    with pytest.raises(UsageError, match=r"Q has shape \[2, 4, 9, 32\] but the problem needs \[B, S, H, D\] = \[2, 9, 4, 32\]"):
        flashprobe.check(bshd, q, k, v, o, lse)


def test_any_strides_are_read_as_the_same_values():
    c = case_of()
    q, k, v, o, lse = outputs(c)
    ref = flashprobe.check(c.problem, q, k, v, o, lse)
    views = [
        np.asfortranarray(q), np.flip(np.flip(k, 1).copy(), 1),  # Fortran order; negative strides
        np.ascontiguousarray(v.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3),  # BHSD memory, BSHD dims
        np.lib.stride_tricks.as_strided(np.concatenate([o, o], axis=3), o.shape,
                                        np.concatenate([o, o], axis=3).strides),  # padded rows
    ]
    assert not views[2].flags.c_contiguous and not views[3].flags.c_contiguous
    r = flashprobe.check(c.problem, *views, lse.T.copy().T)
    assert r.passed and r.margin == ref.margin and r.lse_margin == ref.lse_margin


def test_fused_qkv_views_from_the_generator_check_as_they_are():
    p = Problem(batch=2, hq=3, hkv=3, sq=6, sk=6, d=16, q_strides=[6 * 144, 144, 16, 1], k_strides=[6 * 144, 144, 16, 1],
                v_strides=[6 * 144, 144, 16, 1])
    c = Case(p, seed=5, inputs="nearkeys")
    q, k, v = c.arrays()
    assert q.strides == (6 * 144 * 2, 144 * 2, 32, 2)
    o, lse = correct(p, q, k, v)
    assert flashprobe.check(p, q, k, v, o, lse).passed


class DLPackOnly:
    """An array that offers nothing but DLPack (no buffer protocol, no __array__)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_arrays_are_read_in_place():
    c = case_of("f32")
    q, k, v, o, lse = outputs(c)
    r = flashprobe.check(c.problem, DLPackOnly(q), DLPackOnly(k), DLPackOnly(v), DLPackOnly(o), DLPackOnly(lse))
    assert r.passed and r.margin == flashprobe.check(c.problem, q, k, v, o, lse).margin


class OnDevice(DLPackOnly):
    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, **kw):
        if kw.get("dl_device") not in (None, (2, 0)):
            raise BufferError("this array cannot leave its device")
        return self._a.__dlpack__()


def test_an_array_that_cannot_reach_the_host_is_named():
    c = case_of("f32")
    q, k, v, o, lse = outputs(c)
    with pytest.raises(TypeError, match="Q is in device memory and could not be copied to the host"):
        flashprobe.check(c.problem, OnDevice(q), k, v, o, lse)


@pytest.mark.parametrize("what, change, message", [
    ("q", lambda a: a[:, :, :, :16], r"Q has shape \[2, 9, 4, 16\] but the problem needs \[B, S, H, D\] = \[2, 9, 4, 32\]"),
    ("k", lambda a: a[0], r"K has shape \[17, 2, 32\] but the problem needs \[B, S, H, D\] = \[2, 17, 2, 32\]"),
    ("v", lambda a: a.astype(np.float32), "V is float32 but the problem's dtype is f16: give float16"),
    ("o", lambda a: a.astype(np.float64), "O is float64 but the problem's out_dtype is f16: give float16"),
    ("q", lambda a: a.view(np.uint16), "Q is uint16 but the problem's dtype is f16"),
    ("lse", lambda a: a[:, :, :3], r"LSE has shape \[2, 4, 3\] but the problem needs \[B, Hq, Sq\] = \[2, 4, 9\]"),
    ("lse", lambda a: a.astype(np.float16), "LSE is float16 but must be float32"),
])
def test_wrong_arrays_raise_the_cpp_message(what, change, message):
    c = case_of()
    arrays = dict(zip(("q", "k", "v", "o", "lse"), outputs(c)))
    arrays[what] = change(arrays[what])
    with pytest.raises(UsageError, match=message):
        flashprobe.check(c.problem, **arrays)


def test_what_is_not_an_array_is_named():
    c = case_of()
    q, k, v, o, lse = outputs(c)
    with pytest.raises(TypeError, match="O is a dict, not an array"):
        flashprobe.check(c.problem, q, k, v, {"o": o})
    with pytest.raises(TypeError, match="problem is a int"):
        flashprobe.check(3, q, k, v, o)


def test_nan_in_an_output_fails_and_is_located():
    c = case_of()
    q, k, v, o, lse = outputs(c)
    o = o.copy()
    o[1, 2, 3, 4] = np.nan
    r = flashprobe.check(c.problem, q, k, v, o, lse)
    assert not r.passed and r.metrics["nan_count"] == 1
    assert "NaN/Inf pattern differs" in r.reason and "b1 row2 h3 x4" in r.reason


def test_nan_in_an_input_never_lets_garbage_pass():
    c = case_of()
    q, k, v, o, lse = outputs(c)
    q = q.copy()
    q[0, 4, 1, 7] = np.nan
    garbage = np.random.default_rng(0).normal(size=o.shape).astype(o.dtype)
    with pytest.raises(UsageError, match=r"Q holds NaN at \[0, 4, 1, 7\]"):  # named as such
        flashprobe.check(c.problem, q, k, v, garbage)
    # Allowed on request (as the CLI's --allow-nan-inputs): the NaN propagates, garbage still fails.
    r = flashprobe.check(c.problem, q, k, v, garbage, allow_nan_inputs=True)
    assert not r.passed, r.summary


def test_row_sampling_checks_fewer_rows_and_still_scans_every_row():
    c = case_of(sq=200, sk=40, causal="none")  # (rows that see no key would all be in the sample)
    q, k, v, o, lse = outputs(c)
    r = flashprobe.check(c.problem, q, k, v, o, lse, rows=8, seed=3)
    assert r.passed and r.rows_checked == 8 and r.rows_total == 200
    o = o.copy()
    o[0, 100:, :, :] = np.inf
    assert not flashprobe.check(c.problem, q, k, v, o, lse, rows=8, seed=3).passed
    with pytest.raises(UsageError, match="rows=-1 is not allowed"):
        flashprobe.check(c.problem, q, k, v, o, lse, rows=-1)


def test_problem_as_json_or_dict():
    c = case_of()
    arrays = outputs(c)
    assert flashprobe.check(c.problem.to_json(), *arrays).passed
    assert flashprobe.check(c.problem.to_dict(), *arrays).passed


@pytest.mark.parametrize("layout", [None, "bhsd"])
def test_reference_gives_float64_o_and_lse_in_the_problem_layout(layout):
    c = case_of("bf16", layout=layout, sq=6, sk=3, window_left=1)  # rows 0-2 see no key (diagonal i - 3)
    q, k, v = c.arrays()
    o, lse = flashprobe.reference(c.problem, q, k, v)
    assert o.dtype == np.float64 and lse.dtype == np.float64
    assert o.shape == ((2, 4, 6, 32) if layout else (2, 6, 4, 32)) and lse.shape == (2, 4, 6)
    assert np.isneginf(lse[:, :, :3]).all() and np.isfinite(lse[:, :, 3:]).all()
    rows_o = o if layout is None else o.transpose(0, 2, 1, 3)
    assert (rows_o[:, :3] == 0).all() and (rows_o[:, 3:] != 0).all()
    o2, lse2 = flashprobe.reference(c.problem, q, k, v, rows=[5, 2])
    sub = o2 if layout is None else o2.transpose(0, 2, 1, 3)
    assert np.array_equal(sub[:, 0], rows_o[:, 5]) and np.array_equal(lse2[:, :, 1], lse[:, :, 2])
    assert np.array_equal(sub[:, 1], rows_o[:, 2])
    with pytest.raises(UsageError, match=r"row 6 is not a query row: rows must be in \[0, sq=6\)"):
        flashprobe.reference(c.problem, q, k, v, rows=[6])
    # The kernel that returns the reference (rounded) passes the check.
    out = o.astype(BFLOAT16) if BFLOAT16 is not None else None
    if out is not None:
        assert flashprobe.check(c.problem, q, k, v, out, lse.astype(np.float32)).passed


def _torch():
    return pytest.importorskip("torch", reason="torch is not installed (the H100 run tests these paths)")


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_torch_cpu_tensors_and_grad_tensors(dtype):
    t = _torch()
    c = case_of(dtype, layout="bhsd")
    q, k, v = c.arrays("torch")
    assert q.shape == (2, 4, 9, 32) and str(q.dtype) == {"f16": "torch.float16", "bf16": "torch.bfloat16",
                                                         "f32": "torch.float32"}[dtype]
    o = t.nn.functional.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(2, 1),
                                                     v.float().repeat_interleave(2, 1), is_causal=False,
                                                     attn_mask=_bottom_right(t, 9, 17))
    o = o.to(q.dtype).requires_grad_()
    r = flashprobe.check(c.problem, q, k, v, o)
    assert r.passed, r.summary


def _bottom_right(t, sq, sk):
    return t.ones(sq, sk, dtype=t.bool).tril(diagonal=sk - sq)


def test_torch_gpu_tensors_are_copied_to_the_host():
    t = _torch()
    if not t.cuda.is_available():
        pytest.skip("no CUDA device")
    c = case_of("bf16", layout="bhsd")
    q, k, v = c.arrays("torch", device="cuda")
    assert q.is_cuda
    o = t.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=_bottom_right(t, 9, 17).cuda(), enable_gqa=True)
    assert flashprobe.check(c.problem, q, k, v, o).passed
