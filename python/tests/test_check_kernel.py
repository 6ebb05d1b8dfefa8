"""flashprobe.testing.check_kernel: a correct numpy kernel passes; each planted bug is caught and
shrunk to a small case that still shows it, reported as problem JSON with a one-line reproduction."""
import json
import re

import numpy as np
import pytest

import flashprobe
from flashprobe import Case
from flashprobe.testing import KernelCheckFailed, Unsupported, check_kernel, replay

import attention_numpy as an

SMALL = dict(size=30)  # Sq up to 90, Sk up to 180: quick cases, every bias still drawn


def test_a_correct_kernel_passes_every_case():
    r = check_kernel(an.correct, max_examples=120, seed=1, **SMALL)
    assert r.checked == 120 and r.failed == 0 and r.refused == 0
    assert 0 < r.worst_margin <= 1
    assert set(r.by_dtype) == {"f16", "bf16"}
    assert "PASS correct: 120 cases checked, 120 passed, 0 failed, 0 refused" in str(r)


def test_a_float32_kernel_passes_every_case_including_f32_inputs():
    r = check_kernel(an.correct_f32, max_examples=100, seed=2, dtypes=["f16", "bf16", "f32"], any_head_dim=True,
                     dv_differs=True, edge_windows=True, **SMALL)
    assert r.checked == 100 and r.failed == 0


# bug -> what the shrunk case must still have (the smallest case that shows the bug needs it)
PLANTED = {
    "gqa_modulo": lambda p, c: p.hq != p.hkv and p.hkv >= 2,
    "ignore_seqlens": lambda p, c: p.seqlens_k and min(p.seqlens_k) < p.sk,
    "top_left_always": lambda p, c: p.causal == "bottom_right" and p.sq != p.sk,
    "window_off_by_one": lambda p, c: p.window_left >= 0,
    "no_max_subtraction": lambda p, c: c.inputs in ("large", "rising", "logits"),
    "drop_last_key": lambda p, c: p.sk >= 1,
    "lse_log2": lambda p, c: True,
    "default_scale": lambda p, c: p.scale != 0,
    "round_toward_zero": lambda p, c: p.out_dtype == "bf16",
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_bug_is_caught_and_shrunk(bug):
    fn = an.planted(bug)
    with pytest.raises(KernelCheckFailed) as e:
        check_kernel(fn, max_examples=300, seed=3, **SMALL)
    f = e.value
    p, c = f.case.problem, f.case
    assert PLANTED[bug](p, c), f"{bug}: shrunk to {c.id}, which cannot show it"
    # Shrunk: one batch element, few rows and heads, every unneeded feature off.
    # Truncation shows only through the bias statistic, which needs 256 compared elements (rows of 64).
    assert p.batch == 1 and p.sq <= (8 if bug == "round_toward_zero" else 2) and p.hq <= 4, c.id
    if bug not in ("no_max_subtraction",):
        assert p.sk <= 7 or bug == "round_toward_zero", c.id
    if bug != "default_scale":
        assert p.scale == 0, c.id
    if bug != "window_off_by_one":
        assert p.window_left == -1 and p.window_right == -1, c.id
    assert p.softcap == 0 and not p.alibi_slopes and p.layout == "bshd", c.id
    # The report: the verdict, the case as JSON and a one-line reproduction that fails again.
    text = str(f)
    assert f.result is not None and not f.result.passed and f.result.summary in text
    case_json = re.search(r"  case: (\{.*\})\n", text).group(1)
    assert Case.from_json(case_json) == f.case
    line = re.search(r"  reproduce: (.*)", text).group(1)
    assert line == f"flashprobe.testing.replay(planted_{bug}, {f.case.to_json()!r})"
    assert not replay(fn, json.loads(case_json)).passed
    assert replay(an.correct, case_json).passed


def test_a_kernel_that_raises_fails_with_its_error_and_a_shrunk_case():
    def crashes_on_gqa(problem, q, k, v):
        if problem.hq != problem.hkv:
            raise IndexError("kv head out of range")
        return an.correct(problem, q, k, v)

    with pytest.raises(KernelCheckFailed, match="the kernel raised IndexError: kv head out of range") as e:
        check_kernel(crashes_on_gqa, max_examples=200, seed=4, **SMALL)
    assert e.value.case.problem.hq == 2 and e.value.case.problem.hkv == 1 and e.value.result is None


def test_an_output_of_the_wrong_dtype_fails_with_the_cpp_message():
    def float64_out(problem, q, k, v):
        o, lse = an.correct(problem, q, k, v)
        return o.astype(np.float64), lse

    with pytest.raises(KernelCheckFailed, match="UsageError: O is float64 but the problem's out_dtype is f16"):
        check_kernel(float64_out, max_examples=20, seed=5, dtypes=["f16"], **SMALL)


def test_refused_cases_are_counted_never_passed():
    def no_gqa(problem, q, k, v):
        if problem.hq != problem.hkv:
            raise Unsupported("GQA")
        return an.correct(problem, q, k, v)

    r = check_kernel(no_gqa, max_examples=60, seed=6, **SMALL)
    assert r.checked == 60 and r.refused > 0
    with pytest.raises(KernelCheckFailed, match="no case was checked"):
        def refuses_all(problem, q, k, v):
            raise Unsupported("nothing")
        check_kernel(refuses_all, max_examples=10, seed=6, settings=_lenient(), **SMALL)


def _lenient():
    from hypothesis import HealthCheck, settings
    return settings(suppress_health_check=list(HealthCheck))


def test_supports_and_constraints_shape_the_cases():
    seen = []

    def kernel(problem, q, k, v):
        seen.append(problem)
        return an.correct(problem, q, k, v)

    check_kernel(kernel, max_examples=40, seed=7, head_dims=[32], dtypes=["bf16"], causal=False,
                 supports=lambda p: p.sq <= p.sk, **SMALL)
    assert len(seen) == 40
    assert all(p.d == 32 and p.dtype == "bf16" and p.causal == "none" and p.sq <= p.sk for p in seen)


def test_the_same_seed_draws_the_same_cases_and_the_environment_sets_the_budget(monkeypatch):
    def record(into):
        def kernel(problem, q, k, v):
            into.append(problem.id)
            return an.correct(problem, q, k, v)
        return kernel

    a, b = [], []
    check_kernel(record(a), max_examples=25, seed=8, **SMALL)
    check_kernel(record(b), max_examples=25, seed=8, **SMALL)
    assert a == b
    monkeypatch.setenv("FLASHPROBE_PROP_CASES", "25")
    monkeypatch.setenv("FLASHPROBE_PROP_SEED", "8")
    c = []
    r = check_kernel(record(c), **SMALL)
    assert r.checked == 25 and c == a and r.seed == 8
    monkeypatch.setenv("FLASHPROBE_PROP_CASES", "7")
    assert check_kernel(an.correct, **SMALL).checked == 7
    monkeypatch.setenv("FLASHPROBE_PROP_CASES", "many")
    with pytest.raises(flashprobe.UsageError, match="FLASHPROBE_PROP_CASES='many' is not an integer"):
        check_kernel(an.correct, **SMALL)


def test_a_failure_is_saved_for_the_cli_and_the_cli_agrees(cli, tmp_path):
    with pytest.raises(KernelCheckFailed) as e:
        check_kernel(an.planted("gqa_modulo"), max_examples=200, seed=3, failure_dir=tmp_path, **SMALL)
    line = re.search(r"re-check with: (flashprobe check .*)", str(e.value)).group(1)
    r = cli(*line.split()[1:])
    assert r.returncode == 1, r.stdout + r.stderr
    rec = json.loads((tmp_path / e.value.case.id / "check.json").read_text())
    assert rec["pass"] is False and rec["case_id"] == e.value.result.case_id
    assert rec["o"]["error"] == e.value.result.record["o"]["error"]


def test_the_builds_own_kernels_are_listed_and_run_only_with_a_gpu():
    import flashprobe.kernels as fk

    assert {"mma", "tiled", "decode", "ref3pass"} <= set(fk.names())
    assert "split-K" in fk.describe()["decode"]
    with pytest.raises(flashprobe.UsageError, match="unknown kernel 'flash3' \\(this build has: "):
        fk.kernel("flash3")
    c = flashprobe.generate_case(1, head_dims=[64], dtypes=["f16"])
    if flashprobe.build_info()["backend"] == "off":
        with pytest.raises(flashprobe.NoDevice):
            fk.kernel("tiled")(c.problem, *c.arrays())
        return
    try:  # a GPU build: the kernel passes the oracle on its cases, through the same gate
        r = check_kernel(fk.kernel("tiled"), max_examples=60, seed=9, **SMALL)
    except flashprobe.NoDevice as e:
        pytest.skip(f"no GPU: {e}")
    assert r.checked == 60
