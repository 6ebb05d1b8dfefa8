"""The crash shrinker of the torch-props harness (reports/baselines/crash_shrink.py): from a large problem
on which a subject raises, it keeps each simplification under which the subject still raises, and ends
at the smallest problem that does; every candidate it tries is a valid problem. No torch needed."""
import importlib.util
import json
from pathlib import Path

import flashprobe

SHRINK = Path(__file__).resolve().parents[2] / "reports" / "baselines" / "crash_shrink.py"


def load():
    spec = importlib.util.spec_from_file_location("crash_shrink", SHRINK)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


BIG = flashprobe.Problem(batch=3, hq=8, hkv=2, sq=103, sk=512, d=128, dtype="bf16", causal="bottom_right",
                         softcap=30.0, window_left=64, kv_offset=409)
VARLEN = flashprobe.Problem(batch=3, hq=4, hkv=4, sq=40, sk=300, d=64, alibi_slopes=[0.5, 0.25, 0.125, 0.0625],
                            seqlens_k=[300, 129, 17])


def test_shrinks_to_the_smallest_problem_that_still_crashes():
    cs = load()
    tried = []

    def fails(p):  # a stand-in for a compile failure: soft-cap with a GQA group of at least 2 and sk > 100
        tried.append(p)
        return p.softcap > 0 and p.hq // p.hkv >= 2 and p.sk > 100

    r = cs.shrink(fails, BIG, seconds=60)
    j = r["problem"]
    assert r["stopped_by"] == "minimal", r
    assert (j["batch"], j["hq"], j["hkv"], j["sq"], j["d"], j["dv"]) == (1, 2, 1, 1, 64, 64), j
    assert 100 < j["sk"] <= 128, j  # halving stops at the first length that no longer crashes
    assert j["softcap"] == 30.0 and j["causal"] == "none" and j["window_left"] == -1 and j["kv_offset"] == 0, j
    assert r["attempts"] == len(tried) and r["steps"], r
    assert fails(flashprobe.Problem.from_json(json.dumps(j)))
    assert r["id"] == flashprobe.Problem.from_json(json.dumps(j)).id


def test_a_crash_that_needs_everything_stays_as_it_was():
    cs = load()
    r = cs.shrink(lambda p: p.to_json() == BIG.to_json(), BIG, seconds=60)
    assert r["problem"] == json.loads(BIG.to_json()) and r["steps"] == [] and r["stopped_by"] == "minimal", r


def test_the_time_budget_stops_it():
    cs = load()
    r = cs.shrink(lambda p: True, BIG, seconds=0)
    assert r["stopped_by"] == "time budget" and r["attempts"] == 0, r


def test_per_batch_key_lengths_and_alibi_slopes_shrink_with_their_batch_and_heads():
    cs = load()
    # A stand-in crash that needs ALiBi and a key length under sk: both stay, sized to one batch and head.
    r = cs.shrink(lambda p: bool(p.alibi_slopes) and bool(p.seqlens_k) and p.seqlens_k[0] < p.sk, VARLEN, seconds=60)
    j = r["problem"]
    assert (j["batch"], j["hq"], j["hkv"], j["sq"]) == (1, 1, 1, 1), j
    assert len(j["alibi_slopes"]) == 1 and len(j["seqlens_k"]) == 1 and j["seqlens_k"][0] < j["sk"], j


def test_lengths_shrink_with_their_kv_offset():
    cs = load()
    # A stand-in crash that needs a KV offset: the lengths still shrink, the offset moving with them.
    r = cs.shrink(lambda p: p.kv_offset > 0, BIG, seconds=60)
    j = r["problem"]
    assert j["sq"] == 1 and j["kv_offset"] >= 1 and j["sk"] == j["kv_offset"] + j["sq"], j
    assert j["sk"] <= 4, j
