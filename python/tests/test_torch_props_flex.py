"""The FlexAttention subject of reports/baselines/torch_props.py (the H100 record's harness): inputs padded
into a few shape classes compute each problem exactly (the oracle judges the unpadded output), the
compiled graphs stay few over many problems, and a subject that raises on a problem leaves a recorded
finding while the run goes on. Needs PyTorch with flex_attention (CPU or GPU); skipped without it."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the H100 run tests the harness)")
pytest.importorskip("torch.nn.attention.flex_attention", reason="this torch has no flex_attention")

import flashprobe  # noqa: E402
from flashprobe.testing import Unsupported, check_kernel  # noqa: E402

HARNESS = Path(__file__).resolve().parents[2] / "reports" / "baselines" / "torch_props.py"


@pytest.fixture(scope="module")
def tp():
    spec = importlib.util.spec_from_file_location("torch_props", HARNESS)
    m = importlib.util.module_from_spec(spec)
    sys.modules["torch_props"] = m  # torch.compile imports the score_mod's module by name
    spec.loader.exec_module(m)
    m.DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
    return m


def test_shape_classes(tp):
    P = flashprobe.Problem
    # Sizes 1, sequence lengths off the 128 grid and groups 2..8 all land in one class.
    assert tp.flex_shape(P(batch=1, hq=3, hkv=1, sq=1, sk=5, d=64)) == (2, 2, 8, 128, 128)
    assert tp.flex_shape(P(batch=3, hq=12, hkv=2, sq=129, sk=600, d=64)) == (3, 2, 8, 256, 640)
    assert tp.flex_shape(P(batch=2, hq=4, hkv=4, sq=128, sk=256, d=64)) == (2, 4, 1, 128, 256)  # MHA stays MHA
    assert tp.flex_shape(P(batch=1, hq=9, hkv=1, sq=7, sk=7, d=64)) == (2, 2, 16, 128, 128)
    assert tp.flex_shape(P(batch=1, hq=3, hkv=1, sq=7, sk=9, d=64), bucket=False) == (1, 1, 3, 7, 9)
    # A crash's key is the problem's graph class (the shapes too when they are not padded): two problems of
    # one dtype, head dims and GQA group but other padded batch or one-block sequences are two classes.
    padded, exact = tp.Flex(bucket=True, lse=False), tp.Flex(bucket=False, lse=False)
    a = P(batch=3, hq=12, hkv=2, sq=129, sk=600, d=128, dtype="bf16")
    b = P(batch=4, hq=12, hkv=2, sq=129, sk=600, d=128, dtype="bf16")
    c = P(batch=3, hq=12, hkv=2, sq=100, sk=600, d=128, dtype="bf16")
    assert padded.crash_key(a) == padded.graph_class(a) == ("bf16", 128, 128, 3, 2, 8, False, False)
    assert len({padded.crash_key(x) for x in (a, b, c)}) == 3
    assert exact.crash_key(P(batch=1, hq=3, hkv=1, sq=7, sk=9, d=64)) == ("f16", 64, 64, 1, 1, 3, 7, 9)


def test_padded_flex_passes_the_oracle_with_few_graphs(tp):
    """Problems of every shape class through the padded subject: each passes the oracle (padding that
    leaked into the result, a head put in the wrong place or an ALiBi slope on the wrong head would
    fail), and the compiled graphs are no more than the graph classes of the problems (Flex.graph_class:
    the padded batch and head counts, one-block sequences), not one per problem's shape."""
    gpu = tp.DEVICE == "cuda"
    flex = tp.Flex(bucket=True, lse=gpu)  # the CPU's compiled flex_attention returns no LSE
    dtype = "f16" if gpu else "f32"
    classes, shapes = set(), set()

    def subject(p, q, k, v):
        classes.add(flex.graph_class(p))
        shapes.add((p.batch, p.hq, p.hkv, p.sq, p.sk))
        return flex(p, q, k, v)

    g0 = tp.compiled_graphs()
    r = check_kernel(subject, max_examples=12, seed=3, array="torch", device=tp.DEVICE, check_lse=gpu,
                     supports=lambda p: p.empty_rows == 0 and p.sk > 0 and p.dv == p.d, dtypes=[dtype],
                     head_dims=[64], name="flex-padded")
    assert r.checked >= 6, r
    assert len(classes) < len(shapes), (classes, shapes)  # the padding puts several shapes into one class
    g1 = tp.compiled_graphs()
    print(f"{g1 - g0 if g0 is not None and g1 is not None else '?'} graphs compiled for {r.checked} problems, "
          f"{len(shapes)} shapes, {len(classes)} graph classes")
    if g0 is not None and g1 is not None:
        # 12 problems, 12 shapes, 7 classes: 6 graphs on the CPU and on an H100 with PyTorch 2.11 (fewer
        # than the classes: once Dynamo has made a size dynamic, one graph serves a later class too).
        assert g1 - g0 <= len(classes), f"{g1 - g0} graphs compiled for {len(classes)} graph classes"


def test_a_crash_is_a_recorded_finding_and_the_run_goes_on(tp, tmp_path):
    """run_one with a subject that raises on some problems: those are recorded (problem JSON, exception,
    saved under failures/), counted as crashed (neither passed nor refused), the row is marked failed,
    and the other problems are still checked."""
    calls = {"n": 0}

    def reference(p, q, k, v):
        o, lse = flashprobe.reference(p, q, k, v)
        return torch.from_numpy(o.astype("float32")), torch.from_numpy(lse.astype("float32"))

    def subject(p, q, k, v):
        calls["n"] += 1
        if p.sq % 2 == 0:  # (Hypothesis starts from sq = 1: the subject returns before it crashes)
            raise RuntimeError("compile failure stand-in (even sq)")
        if p.softcap:
            raise Unsupported("no soft-cap")
        return reference(p, q, k, v)

    row = tp.run_one("flex", subject, "f32", dict(head_dims=[64], max_sq=8, max_sk=16), False, 20, 120,
                     str(tmp_path), False, 5)
    assert row["crashed"] > 0 and row["checked"] > 0, row
    assert row["failed"] == 1 and row["failure"] is None, row
    assert row["stopped_by"] == "target", row
    assert sum(row["refusals"].values()) == row["refused"], row  # crashes are not refusals
    c = row["crashes"][0]
    assert c["error"].startswith("RuntimeError: compile failure stand-in (even sq)")
    saved = Path(c["saved"])
    assert json.loads((saved / "problem.json").read_text())["sq"] % 2 == 0
    assert "RuntimeError" in (saved / "error.txt").read_text()
    assert flashprobe.Problem.from_json((saved / "problem.json").read_text()).sq == c["problem"]["sq"]


def test_the_first_crash_is_shrunk_to_a_replayable_case(tp, tmp_path):
    """run_one with shrink_seconds: the first crash is shrunk (crash_shrink.py) to the smallest problem on
    which the subject still raises the same exception, saved as a case JSON that --replay's path
    (flashprobe.testing.replay) makes raise again."""
    def reference(p, q, k, v):
        o, lse = flashprobe.reference(p, q, k, v)
        return torch.from_numpy(o.astype("float32")), torch.from_numpy(lse.astype("float32"))

    def subject(p, q, k, v):
        if p.sq >= 3 and p.hq != p.hkv:
            raise RuntimeError("lowering failure stand-in (GQA, sq >= 3)")
        if p.softcap:
            raise Unsupported("no soft-cap")
        return reference(p, q, k, v)

    row = tp.run_one("flex", subject, "f32", dict(head_dims=[64], max_sq=40, max_sk=64), False, 30, 120,
                     str(tmp_path), False, 11, shrink_seconds=60)
    assert row["crashed"] > 0, row
    s = row["crashes"][0]["shrunk"]
    assert s["reproduced"] and s["error_type"] == "RuntimeError", s
    p = s["problem"]
    assert (p["batch"], p["sq"], p["hq"] // p["hkv"], p["hkv"], p["d"]) == (1, 3, 2, 1, 64), p
    assert all(row["crashes"][i].get("shrunk") is None for i in range(1, len(row["crashes"])))  # the first only
    case = (tmp_path / s["saved"]).read_text()
    with pytest.raises(RuntimeError, match="lowering failure stand-in"):
        flashprobe.testing.replay(subject, case, array="torch", device="cpu", check_lse=False)


def test_two_runs_that_fail_on_one_case_keep_both_saved(tp, tmp_path):
    """Two subjects whose failures shrink to the same case save their outputs in their own folders
    (failures/<run>/<case>/): at ada6362 sdpa-flash-bwd and sdpa-cudnn-bwd shrank to one case and the
    second overwrote the first's files."""
    def planted(shift):  # the oracle's O plus a constant: every case fails, each shrinks to the smallest
        def kernel(p, q, k, v):
            o, _ = flashprobe.reference(p, q, k, v)
            return torch.from_numpy((o + shift).astype("float32")), None
        return kernel

    rows = [tp.run_one(name, planted(shift), "f32", dict(head_dims=[64], max_sq=8, max_sk=16), False, 20, 120,
                       str(tmp_path), False, 5) for name, shift in (("sdpa-flash", 1.0), ("sdpa-cudnn", 2.0))]
    saved = [r["failure"]["saved"] for r in rows]
    assert saved[0].startswith("failures/sdpa-flash-f32/") and saved[1].startswith("failures/sdpa-cudnn-f32/"), saved
    assert Path(saved[0]).name == Path(saved[1]).name, saved  # the same shrunk case
    o1, o2 = (np.load(tmp_path / s / "o.npy").astype(np.float64) for s in saved)
    assert np.allclose(o2 - o1, 1.0), (o1, o2)  # each subject's own output


def test_a_run_goes_on_past_its_failures_up_to_max_failures(tp, tmp_path):
    """max_failures: each failing chunk's case shrunk and recorded in "failures", the run going on with its
    next chunk until the max_failures-th failure (1, the default: it stops at the first)."""
    def planted(p, q, k, v):  # wrong wherever a query row has 4 rows above it
        o, _ = flashprobe.reference(p, q, k, v)
        return torch.from_numpy((o + (1.0 if p.sq >= 5 else 0.0)).astype("float32")), None

    args = ("sdpa-math", planted, "f32", dict(head_dims=[64], max_sq=8, max_sk=16), False, 400, 300, str(tmp_path),
            False, 5)
    one = tp.run_one(*args)
    assert (one["stopped_by"], one["failed"], len(one["failures"]), one["chunks"]) == ("failure", 1, 1, 1), one
    assert one["failure"] is one["failures"][0]
    three = tp.run_one(*args, max_failures=3)
    assert (three["stopped_by"], three["failed"], len(three["failures"]), three["chunks"]) == ("failure", 1, 3, 3), three
    assert three["failure"] == three["failures"][0] and three["checked"] > one["checked"], three
    assert all(f["case"]["problem"]["sq"] == 5 for f in three["failures"]), three["failures"]  # each one shrunk


def test_shards_merge_into_one_row(tp):
    rows = [dict(subject="flex", dtype="f16", empty_rows=False, target=500, checked=500, refused=3, crashed=0, chunks=10,
                 failed=0, seconds=100.0, worst_margin=0.3, worst_case="a", failure=None, crashes=[], compiled_graphs=4,
                 refusals={"x": 3}, stopped_by="target", seed=1, shard=0, shards=2),
            dict(subject="flex", dtype="f16", empty_rows=False, target=500, checked=120, refused=1, crashed=1, chunks=3,
                 failed=1, seconds=140.0, worst_margin=0.5, worst_case="b", failure=None, crashes=[{"id": "c"}],
                 compiled_graphs=3, refusals={"x": 1}, stopped_by="time budget", seed=101, shard=1, shards=2)]
    m = tp.merge(rows)
    assert (m["target"], m["checked"], m["refused"], m["crashed"], m["failed"]) == (1000, 620, 4, 1, 1), m
    assert (m["seconds"], m["worst_margin"], m["worst_case"], m["compiled_graphs"]) == (140.0, 0.5, "b", 7), m
    assert m["stopped_by"] == "time budget" and m["refusals"] == {"x": 4} and m["seeds"] == [1, 101], m
    assert m["crashes"] == [{"id": "c"}] and "shard" not in m and m["shards"] == 2, m
    assert m["failure"] is None and m["failures"] == [], m
    rows[0]["failure"], rows[1]["failure"] = {"summary": "FAIL a"}, {"summary": "FAIL b"}
    rows[1]["failures"] = [{"summary": "FAIL b"}, {"summary": "FAIL c"}]  # a shard that went on past its first
    m = tp.merge(rows)
    assert m["failure"] == {"summary": "FAIL a"}, m
    assert m["failures"] == [{"summary": "FAIL a"}, {"summary": "FAIL b"}, {"summary": "FAIL c"}], m


def test_replay_runs_a_case_and_shrinks_a_crash_that_recurs(tp, tmp_path, monkeypatch):
    """--replay on a recorded crash: a subject that raises again has it shrunk into replay-<subject>/
    shrunk-case.json; one that passes says so; replay.json holds both and the exit code is 1."""
    import argparse

    def reference(p, q, k, v):
        o, lse = flashprobe.reference(p, q, k, v)
        return torch.from_numpy(o.astype(p.out_dtype.replace("f", "float"))), torch.from_numpy(lse.astype("float32"))

    def crashing(p, q, k, v):
        if p.causal != "none" and p.sq > 2:
            raise RuntimeError("lowering failure stand-in (causal, sq > 2)")
        return reference(p, q, k, v)

    table = dict(tp.subjects())
    table["flex"] = (lambda: crashing, ["f16"], tp.flex_domain, False, 1)
    def off_by_one(p, q, k, v):
        o, lse = reference(p, q, k, v)
        return o + 1, lse

    table["sdpa-math"] = (lambda: reference, ["f16"], tp.plain, False, 1)
    table["sdpa-efficient"] = (lambda: off_by_one, ["f16"], tp.plain, False, 1)
    monkeypatch.setattr(tp, "subjects", lambda: table)
    case = tmp_path / "case.json"
    case.write_text((HARNESS.parent / "flex_crash_083d889.json").read_text())
    a = argparse.Namespace(replay=str(case), subjects="flex,sdpa-math,sdpa-efficient", out=str(tmp_path / "out"),
                           shrink_seconds=60)
    assert tp.replay_cases(a) == 1
    rec = json.loads((tmp_path / "out" / "replay.json").read_text())
    flex, math, eff = rec["subjects"]
    # A failed verdict keeps the subject's output beside the case (the offline analysis reads it).
    assert eff["verdict"] == "failed" and eff["saved"].startswith("replay-sdpa-efficient/"), eff
    saved = tmp_path / "out" / eff["saved"]
    assert (saved / "o.npy").is_file() and (saved / "problem.json").is_file(), eff
    assert "saved" not in math, math
    assert flex["verdict"] == "raised" and "lowering failure stand-in" in flex["error"], flex
    s = flex["shrunk"]
    assert s["reproduced"] and (s["problem"]["sq"], s["problem"]["hq"], s["problem"]["causal"]) == (3, 1, "top_left"), s
    assert (tmp_path / "out" / s["saved"]).is_file() and s["saved"].startswith("replay-flex/"), s
    assert math["verdict"] == "passed", math


def test_a_subject_that_crashes_on_every_case_is_stopped_and_its_crashes_kept(tp, tmp_path):
    """A compiled subject that raises on every problem (each crash may cost a compilation) is stopped
    after CRASHES_BEFORE_STOP crashes with none returned: no case checked or refused, the run failed and
    said so, and every crash handed to progress() as it happened (a worker stopped mid-chunk keeps them)."""
    seen = []

    def subject(p, q, k, v):
        raise RuntimeError("compile failure stand-in (every problem)")

    row = tp.run_one("flex", subject, "f32", dict(head_dims=[64], max_sq=8, max_sk=16), False, 50, 120,
                     str(tmp_path), False, 5, progress=lambda r: seen.append(r["crashed"]))
    n = tp.CRASHES_BEFORE_STOP
    assert (row["crashed"], row["checked"], row["refused"], row["failed"]) == (n, 0, 0, 1), row
    assert row["stopped_by"].startswith("crashed on every case"), row
    assert len(row["crashes"]) == n and seen[:n] == list(range(1, n + 1)), (row, seen)


def test_problems_of_a_graph_class_that_crashed_are_not_run_again(tp, tmp_path):
    """A subject with crash_key (FlexAttention: what its compiled graph is specialised on): after a crash,
    the problems with the same key are skipped (counted apart, neither checked nor refused), the others
    still run."""
    class Subject:
        calls = 0

        def crash_key(self, p):
            return p.d

        def __call__(self, p, q, k, v):
            Subject.calls += 1
            if p.d == 128:
                raise RuntimeError("compile failure stand-in (d = 128)")
            o, lse = flashprobe.reference(p, q, k, v)
            return torch.from_numpy(o.astype("float32")), torch.from_numpy(lse.astype("float32"))

    row = tp.run_one("flex", Subject(), "f32", dict(head_dims=[64, 128], max_sq=8, max_sk=16), False, 30, 120,
                     str(tmp_path), False, 3)
    assert row["crashed"] == 1 and row["skipped_after_crash"] > 0, row
    assert row["checked"] == 30 and row["refused"] == 0 and row["failed"] == 1, row
    assert Subject.calls == 31, Subject.calls  # the 30 checked and the one crash: the skipped ones never called
    assert tp.merge([dict(row, seed=3), dict(row, seed=4)])["skipped_after_crash"] == 2 * row["skipped_after_crash"]
    assert "then" in tp.row_line(row)


def test_a_flex_crash_skips_only_its_own_graph_class(tp, tmp_path):
    """Flex's crash_key through run_one: a subject that crashes on every problem of the first problem's graph
    class (Flex.graph_class) skips later problems of that class only; problems of the same dtype, head dims
    and GQA group but another class (padded batch or kv heads) are still called and checked."""
    flex = tp.Flex(bucket=True, lse=False)
    state = {"bad": None, "called": [], "skipped": 0}

    class Subject:
        crash_key = staticmethod(flex.crash_key)

        def __call__(self, p, q, k, v):
            cls = flex.graph_class(p)
            state["bad"] = state["bad"] or cls
            state["called"].append(cls)
            if cls == state["bad"]:
                raise RuntimeError("compile failure stand-in (one graph class)")
            o, lse = flashprobe.reference(p, q, k, v)
            return torch.from_numpy(o.astype("float32")), torch.from_numpy(lse.astype("float32"))

    row = tp.run_one("flex", Subject(), "f32", dict(head_dims=[64], max_sq=8, max_sk=16), False, 40, 120,
                     str(tmp_path), False, 7)
    bad = state["bad"]
    assert row["crashed"] == 1 and row["checked"] == 40, row  # the crashed class is never called again
    assert state["called"].count(bad) == 1, state
    # The coarser key (dtype, head dims, group) would have skipped these: they were run and checked.
    coarse = lambda cls: (cls[0], cls[1], cls[2], cls[5])  # noqa: E731
    assert any(c != bad and coarse(c) == coarse(bad) for c in state["called"]), state
