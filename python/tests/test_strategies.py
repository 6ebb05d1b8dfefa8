"""flashprobe.strategies: Hypothesis drives the C++ case generator, within the constraints, with its
biases, and the cases it draws are the C++ gate's (same JSON, same inputs)."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flashprobe
from flashprobe import Case, Problem, UsageError
from flashprobe.strategies import cases, inputs, problems


@settings(max_examples=150)
@given(problems(head_dims=[128], dtypes=["bf16"], causal=False, max_sq=40, max_batch=1,
                supports=lambda p: p.sk >= p.sq))
def test_problems_stay_inside_their_constraints(p):
    assert isinstance(p, Problem)
    assert p.d == p.dv == 128 and p.dtype == "bf16" and p.causal == "none" and p.batch == 1
    assert p.sq <= 40 and p.sk >= p.sq
    assert not [w for w in p._p.issues() if w[0] == "error"]


@settings(max_examples=60)
@given(st.data())
def test_inputs_are_the_cases_arrays_and_replay_from_their_json(data):
    p = data.draw(problems(max_sq=20, max_sk=30))
    q, k, v = x = data.draw(inputs(p))
    c = x.case
    assert c.problem == p and c.inputs in flashprobe.INPUT_KINDS
    shapes = {"bshd": lambda s, h, d: (p.batch, s, h, d), "strided": lambda s, h, d: (p.batch, s, h, d),
              "bhsd": lambda s, h, d: (p.batch, h, s, d)}
    lay = p.tensor_layouts
    assert q.shape == shapes[lay["q"]](p.sq, p.hq, p.d) and v.shape == shapes[lay["v"]](p.sk, p.hkv, p.dv)
    again = Case.from_json(json.loads(c.to_json()))
    for a, b in zip((q, k, v), again.arrays()):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    assert not q.flags.writeable


def test_unknown_constraints_are_named():
    with pytest.raises(UsageError, match="unknown constraint 'head_dim'"):
        problems(head_dim=[64])
    with pytest.raises(UsageError, match="dtype 'f64' is not one of f16, bf16, f32"):
        problems(dtypes=["f64"])


def features(p: Problem, kind: str) -> "set[str]":
    f = set()
    f.add("sq1") if p.sq == 1 else None
    f.add("sk_small") if p.sk <= 7 else None
    f.add("sk_tail") if p.sk in (63, 65, 127, 129) else None
    f.add("gqa") if p.hq != p.hkv else None
    f.add("causal") if p.causal != "none" else None
    f.add("top_left") if p.causal == "top_left" else None
    f.add("window") if p.window_left >= 0 or p.window_right >= 0 else None
    f.add("kv_offset") if p.kv_offset else None
    f.add("seqlens") if p.seqlens_k else None
    f.add("softcap") if p.softcap else None
    f.add("alibi") if p.alibi_slopes else None
    f.add("bhsd") if p.layout == "bhsd" else None
    f.add("bf16") if p.dtype == "bf16" else None
    f.add("batch>1") if p.batch > 1 else None
    f.add("scale") if p.scale else None
    f.add("empty_rows") if p.empty_rows else None
    f.add(f"in-{kind}")
    return f


def frequencies(cases_):
    counts = {}
    for c in cases_:
        for f in features(c.problem, c.inputs):
            counts[f] = counts.get(f, 0) + 1
    return {k: v / len(cases_) for k, v in counts.items()}


def test_hypothesis_draws_with_the_cpp_generators_biases():
    # The same features, at comparable rates, from Hypothesis's choices and from the C++ seeded driver
    # (uniform choices): the biases are the C++ code's, whoever supplies the choices.
    drawn = []

    # derandomize: Hypothesis's own draws are not uniform, and from a random seed a 1-in-10 kind was
    # drawn 0 times in 400 about one run in two; a fixed seed makes the comparison repeatable.
    @settings(max_examples=400, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(cases())
    def collect(c):
        drawn.append(c)

    collect()
    seeded = [flashprobe.generate_case(seed) for seed in range(2000)]
    fh, fs = frequencies(drawn), frequencies(seeded)
    for name, rate in fs.items():
        if rate < 0.02:
            continue
        got = fh.get(name, 0.0)
        assert rate / 4 <= got <= min(1.0, rate * 4), f"{name}: {got:.3f} from Hypothesis, {rate:.3f} seeded"
    assert set(fs) - set(fh) <= {k for k, r in fs.items() if r < 0.02}


def test_generate_case_is_the_cpp_seeded_generator():
    a = flashprobe.generate_case(42, head_dims=[64], dtypes=["f16"])
    assert a == flashprobe.generate_case(42, head_dims=[64], dtypes=["f16"])
    assert a.problem.d == 64 and a.problem.dtype == "f16"
    small = flashprobe.generate_case(7, size=0).problem  # every range at its low end
    assert small.batch == 1 and small.sq <= 2 and small.sk <= 2 and small.causal == "none"
    big = [flashprobe.generate_case(s, supports=lambda p: p.sk > 100).problem.sk for s in range(20)]
    assert min(big) > 100
    with pytest.raises(UsageError, match="refused 1000 generated problems"):
        flashprobe.generate_case(1, supports=lambda p: False)


def test_case_json_names_bad_fields():
    with pytest.raises(UsageError, match="case field 'inputs' = \"huge\" is not one of normal, large, nearkeys, rising, logits"):
        Case.from_json('{"problem": {}, "seed": 1, "inputs": "huge"}')
    with pytest.raises(UsageError, match="input kind 'huge'"):
        Case(Problem(), 1, "huge")
