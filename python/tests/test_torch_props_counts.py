"""The counts of reports/baselines/torch_props.py's runs: a case Hypothesis generated is counted once, and
the subject's calls after a failure (Hypothesis shrinking it) are calls_after_failure, never cases checked
or refused
(sdpa-cudnn-bwd f16 reported 319 checked for a target of 300 at ada6362). A planted failing numpy
subject through run_one, as the H100 run calls it. Needs PyTorch (the harness imports it); skipped
without it."""
import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the H100 run tests the harness)")

import flashprobe  # noqa: E402
from flashprobe.testing import Unsupported  # noqa: E402

HARNESS = Path(__file__).resolve().parents[2] / "reports" / "baselines" / "torch_props.py"


@pytest.fixture(scope="module")
def tp():
    spec = importlib.util.spec_from_file_location("torch_props", HARNESS)
    m = importlib.util.module_from_spec(spec)
    sys.modules["torch_props"] = m
    spec.loader.exec_module(m)
    m.DEVICE = "cpu"
    return m


class Planted:
    """The oracle's own output, wrong (O doubled) on problems with more than 4 keys, refusing batch
    counts of 2; every call recorded as (key count, verdict the subject planted)."""

    def __init__(self):
        self.calls = []

    def __call__(self, p, q, k, v):
        if p.batch == 2:
            self.calls.append((p.sk, "refused"))
            raise Unsupported("batch 2 stand-in")
        o, lse = flashprobe.reference(p, q.numpy(), k.numpy(), v.numpy())
        bad = p.sk > 4
        self.calls.append((p.sk, "wrong" if bad else "right"))
        return torch.from_numpy(o.astype("float32") * (2 if bad else 1)), torch.from_numpy(lse.astype("float32"))


def test_cases_checked_count_each_generated_case_once_not_the_calls_shrinking_a_failure(tp, tmp_path):
    s = Planted()
    row = tp.run_one("sdpa-math", s, "f32", dict(head_dims=[64], max_sq=8, max_sk=16), False, 200, 120,
                     str(tmp_path), False, 11)
    assert row["failed"] == 1 and row["stopped_by"] == "failure", row
    first = next(i for i, c in enumerate(s.calls) if c[1] == "wrong")
    generated = s.calls[:first + 1]  # after the first failure, Hypothesis shrinks it: no call is counted
    assert row["checked"] == sum(c[1] != "refused" for c in generated), (row, generated)
    assert row["refused"] == sum(c[1] == "refused" for c in generated), (row, generated)
    assert row["calls_after_failure"] > 0, row
    # Every call is a case up to the failure, a call after it, or the one call that saves the shrunk case.
    assert len(s.calls) == first + 1 + row["calls_after_failure"] + 1, (row, len(s.calls))
    assert row["checked"] <= row["target"]
    assert f"calls after the failure {row['calls_after_failure']}" in tp.row_line(row)
    assert tp.merge([dict(row, seed=1), dict(row, seed=2)])["calls_after_failure"] == 2 * row["calls_after_failure"]
