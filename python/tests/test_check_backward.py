"""flashprobe.check_backward: a correct numpy backward passes on every dtype and feature, each planted
backward bug is caught, bad input names the tensor, and the verdict is the CLI's."""
import json

import numpy as np
import pytest

import flashprobe
from flashprobe import Case, Problem, UsageError
from flashprobe._arrays import BFLOAT16

from attention_numpy import NUMPY_DTYPES, correct
from attention_numpy_backward import BUGS, backward

needs_ml_dtypes = pytest.mark.skipif(BFLOAT16 is None, reason="ml_dtypes is not installed")


def case_of(dtype="f16", layout=None, seed=11, **fields):
    p = dict(batch=2, hq=4, hkv=2, sq=9, sk=17, d=32, dtype=dtype, causal="bottom_right")
    p.update(fields)
    return Case(Problem(layout=layout, **p), seed=seed)


def inputs(case, seed=5):
    """q, k, v, o, lse (the forward, correct) and do (random, out_dtype, O's layout)."""
    q, k, v = case.arrays()
    o, lse = correct(case.problem, q, k, v)
    rng = np.random.default_rng(seed)
    do = rng.standard_normal(o.shape).astype(NUMPY_DTYPES[case.problem.out_dtype])
    return q, k, v, o, lse, do


def run(case, bug=None, **kw):
    q, k, v, o, lse, do = inputs(case)
    dq, dk, dv = backward(case.problem, q, k, v, o, do, bug=bug)
    return flashprobe.check_backward(case.problem, q, k, v, do, dq, dk, dv, o=o, lse=lse, **kw)


FEATURES = {
    "plain": dict(),
    "mqa_top_left": dict(hq=6, hkv=1, causal="top_left"),
    "window": dict(window_left=4, window_right=2),
    "softcap": dict(softcap=2.0, scale=0.5),
    "alibi": dict(alibi_slopes=[0.5, 0.25, 0.125, 0.0625]),
    "seqlens": dict(seqlens_k=[17, 5]),
    "rows_without_keys": dict(sq=20, sk=6, seqlens_k=[6, 0]),
}


@pytest.mark.parametrize("dtype", ["f16", pytest.param("bf16", marks=needs_ml_dtypes), "f32"])
@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_a_correct_backward_passes(dtype, feature):
    r = run(case_of(dtype, **FEATURES[feature]))
    assert r.passed, r.summary
    for m in (r.dq_margin, r.dk_margin, r.dv_margin):
        assert 0 <= m <= 1


def test_bhsd_arrays_are_read_in_their_layout():
    r = run(case_of("f16", layout="bhsd"))
    assert r.passed, r.summary


# Each planted bug on a problem where it shows: softcap with a small cap, GQA with groups of 2+,
# causal with sk != sq.
WHERE = {
    "no_rowsum_d": dict(),
    "gqa_unsummed": dict(hq=6, hkv=2),
    "softcap_grad_missing": dict(softcap=1.0, scale=1.0),
    "causal_missing": dict(sq=12, sk=12),
    "dk_unscaled": dict(),
}


@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.parametrize("dtype", ["f16", pytest.param("bf16", marks=needs_ml_dtypes)])
def test_each_planted_bug_is_caught(bug, dtype):
    assert set(WHERE) == set(BUGS)
    r = run(case_of(dtype, **WHERE[bug]), bug=bug)
    assert not r.passed, f"{bug} survived: {r.summary}"
    assert r.reason and "FAIL" in r.summary
    assert max(m for m in (r.dq_margin, r.dk_margin, r.dv_margin) if m is not None) > 1


def test_one_gradient_alone_is_checked_and_the_others_are_none():
    c = case_of()
    q, k, v, o, lse, do = inputs(c)
    dq, dk, dv = backward(c.problem, q, k, v, o, do)
    r = flashprobe.check_backward(c.problem, q, k, v, do, dv=dv, o=o, lse=lse)
    assert r.passed and r.dv_margin is not None and r.dq_margin is None and r.dk_margin is None
    rec = r.record
    assert rec["backward"]["dq"] is None and rec["backward"]["dv"]["pass"] is True
    # Without O and LSE the bound starts from the emulated forward: still a pass.
    assert flashprobe.check_backward(c.problem, q, k, v, do, dq, dk, dv).passed


def test_bad_input_names_the_tensor():
    c = case_of()
    q, k, v, o, lse, do = inputs(c)
    dq, dk, dv = backward(c.problem, q, k, v, o, do)
    with pytest.raises(UsageError, match="at least one of dq, dk, dv"):
        flashprobe.check_backward(c.problem, q, k, v, do)
    with pytest.raises(UsageError, match="dK"):
        flashprobe.check_backward(c.problem, q, k, v, do, dk=dk[:, :-1])
    with pytest.raises(UsageError, match="dO"):
        flashprobe.check_backward(c.problem, q, k, v, do.astype(np.float32), dq=dq)
    with pytest.raises(UsageError, match="dQ"):
        flashprobe.check_backward(c.problem, q, k, v, do, dq=dq.astype(np.float32))


def test_the_record_is_the_cli_record(cli, tmp_path):
    c = case_of("f16", softcap=3.0)
    q, k, v, o, lse, do = inputs(c)
    dq, dk, dv = backward(c.problem, q, k, v, o, do, bug="no_rowsum_d")
    r = flashprobe.check_backward(c.problem, q, k, v, do, dq, dk, dv, o=o, lse=lse)
    assert not r.passed
    files = dict(q=q, k=k, v=v, o=o, lse=lse, do=do, dq=dq, dk=dk, dv=dv)
    for name, a in files.items():
        np.save(tmp_path / f"{name}.npy", a)
    (tmp_path / "p.json").write_text(c.problem.to_json())
    args = ["check", "--problem", tmp_path / "p.json", "--json", tmp_path / "r.json"]
    for name in files:
        args += [f"--{name}", tmp_path / f"{name}.npy"]
    res = cli(*args)
    assert res.returncode == 1, res.stderr
    cli_rec = json.loads((tmp_path / "r.json").read_text())
    assert cli_rec["backward"]["pass"] is False
    for g in ("dq", "dk", "dv"):
        assert cli_rec["backward"][g]["margin"] == pytest.approx(r.record["backward"][g]["margin"], rel=1e-12)
    assert r.summary in res.stdout


# ---------------------------------------------------------------- check_backward_kernel
def subject(bug=None):
    """The numpy forward and backward as one subject: fn(problem, q, k, v, do) -> (o, lse, dq, dk, dv)."""
    def fn(p, q, k, v, do):
        o, lse = correct(p, q, k, v)
        return (o, lse, *backward(p, q, k, v, o, do, bug=bug))

    fn.__name__ = fn.__qualname__ = f"numpy_backward_{bug or 'correct'}"
    return fn


SMALL = dict(size=30, head_dims=[16, 32])


def test_check_backward_kernel_passes_a_correct_backward():
    from flashprobe.testing import check_backward_kernel

    r = check_backward_kernel(subject(), max_examples=25, seed=3, **SMALL)
    assert r.checked == 25 and r.failed == 0 and 0 < r.worst_margin <= 1, str(r)


@pytest.mark.parametrize("bug", ["no_rowsum_d", "dk_unscaled"])
def test_check_backward_kernel_shrinks_a_planted_bug_and_the_cli_agrees(bug, tmp_path, cli):
    from flashprobe.testing import KernelCheckFailed, check_backward_kernel

    with pytest.raises(KernelCheckFailed) as e:
        check_backward_kernel(subject(bug), max_examples=40, seed=3, failure_dir=tmp_path, **SMALL)
    f = e.value
    assert f.case is not None and f.result is not None and not f.result.passed
    p = f.case.problem
    assert p.batch == 1 and p.sq <= 2, f.case.to_json()  # shrunk
    cmd = [ln for ln in str(f).splitlines() if "re-check with:" in ln][0].split("re-check with: ", 1)[1]
    assert "--do " in cmd and "--dq " in cmd and "--dk " in cmd and "--dv " in cmd
    res = cli(*cmd.split()[1:])
    assert res.returncode == 1, res.stdout + res.stderr
    assert "backward FAIL" in res.stdout


def test_upstream_gradient_is_the_cases_own():
    from flashprobe.testing import upstream_gradient

    c = case_of("bf16" if BFLOAT16 is not None else "f16")
    a, b = upstream_gradient(c), upstream_gradient(c)
    assert np.array_equal(np.asarray(a).view(np.uint16), np.asarray(b).view(np.uint16))
    assert a.shape == (2, 9, 4, 32)
    other = upstream_gradient(case_of("bf16" if BFLOAT16 is not None else "f16", seed=12))
    assert not np.array_equal(np.asarray(a).view(np.uint16), np.asarray(other).view(np.uint16))


def test_large_logits_leave_dq_and_dk_not_bounded_which_is_not_a_pass():
    # Scores of order 1e5 (the harness's `logits` inputs), near one-hot P: dQ and dK's bounds admit
    # every plausible gradient (BACKWARD_TOLERANCE.md, "Not bounded"); dV is still judged.
    p = Problem(batch=1, hq=1, hkv=1, sq=16, sk=5, d=128, dtype="f16", causal="none")
    r = run(Case(p, seed=0, inputs="logits"))
    assert not r.passed and not r.failed and not r.bounded, r.summary
    assert r.summary.startswith("backward NOT BOUNDED"), r.summary
    b = r.record["backward"]
    assert b["dk"]["bounded"] is False and b["dv"]["bounded"] is True  # dQ too with the harness's dO
    assert "cannot bound dK" in r.reason


def test_check_backward_kernel_counts_not_bounded_cases_apart(monkeypatch):
    # A case judged NOT BOUNDED is neither checked (passed) nor a failure to shrink.
    import flashprobe.testing as t

    real = t.run_backward_case
    seen = []

    def every_other_not_bounded(fn, case, **kw):
        r, out = real(fn, case, **kw)
        seen.append(case)

        class NotBounded:
            passed, failed, bounded = False, False, False
            dq_margin = dk_margin = dv_margin = 0.0
            summary = reason = "backward NOT BOUNDED (stand-in)"
            record = None

        return (NotBounded() if len(seen) % 2 else r), out

    monkeypatch.setattr(t, "run_backward_case", every_other_not_bounded)
    r = t.check_backward_kernel(subject(), max_examples=20, seed=3, **SMALL)
    assert r.failed == 0 and r.unbounded > 0 and r.checked + r.unbounded == len(seen), str(r)
    assert f"{r.unbounded} not bounded" in str(r)
