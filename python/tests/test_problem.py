"""flashprobe.Problem: every AttnProblem field, read and validated by the C++ reader (the CLI's)."""
import json

import pytest

import flashprobe
from flashprobe import Problem, UsageError

EVERY_FIELD = dict(batch=2, hq=6, hkv=2, sq=5, sk=9, d=40, dv=24, dtype="bf16", out_dtype="f32", scale=0.25,
                   causal="bottom_right", kv_offset=4, window_left=3, window_right=0, softcap=30.0,
                   alibi_slopes=[0.5, 0.25, 0.125, 0.5, 0.25, 0.125], seqlens_k=[9, 9])


def test_every_field_is_read_and_written_back():
    p = Problem(**EVERY_FIELD)
    for name, value in EVERY_FIELD.items():
        got = getattr(p, name)
        assert (list(got) if isinstance(got, tuple) else got) == value, name
    assert Problem.from_json(p.to_json()) == p
    assert Problem.from_json(json.loads(p.to_json())) == p
    assert json.loads(p.to_json()) == p.to_dict()


def test_defaults_are_the_cpp_defaults_and_dv_out_dtype_follow():
    p = Problem(d=128, dtype="bf16")
    assert (p.batch, p.hq, p.hkv, p.sq, p.sk) == (1, 1, 1, 1, 1)
    assert p.dv == 128 and p.out_dtype == "bf16"
    assert p.causal == "none" and p.window_left == -1 and p.scale == 0.0
    assert p.effective_scale == pytest.approx(128 ** -0.5)
    assert Problem() == Problem.from_json("{}")


def test_layout_bhsd_sets_every_tensor_and_strides_are_kept():
    p = Problem(batch=2, hq=4, hkv=2, sq=3, sk=7, d=16, layout="bhsd")
    assert p.layout == "bhsd" and p.tensor_layouts == dict(q="bhsd", k="bhsd", v="bhsd", o="bhsd")
    assert p.q_strides == (4 * 3 * 16, 16, 3 * 16, 1)
    assert Problem(hq=2, sq=3, d=8).layout == "bshd"
    fused = Problem(hq=2, hkv=2, sq=4, sk=4, d=8, q_strides=[96, 48, 8, 1], k_strides=[96, 48, 8, 1],
                    v_strides=[96, 48, 8, 1])
    assert fused.layout == "strided" and fused.tensor_layouts["o"] == "bshd"
    assert Problem.from_json(fused.to_json()) == fused


@pytest.mark.parametrize("fields, message", [
    (dict(hq=3, hkv=2), "hq: hq=3 is not a multiple of hkv=2: each kv head must serve hq/hkv query heads"),
    (dict(sk=-1), "sk=-1 is not allowed: it must be >= 0"),
    (dict(batch=0), "batch=0 is not allowed: it must be >= 1"),
    (dict(scale=float("nan")), "scale=nan is not allowed"),
    (dict(scale=-1.0), "scale=-1 is not allowed"),
    (dict(softcap=float("inf")), "softcap=inf is not allowed"),
    (dict(window_left=-2), "window_left=-2 is not allowed"),
    (dict(kv_offset=5, sk=4), "kv_offset=5 is not allowed: it must be in [0, sk=4]"),
    (dict(kv_offset=3, sq=2, sk=4), "kv_offset=3 with sq=2 means the cache holds kv_offset + sq = 5 keys, but sk=4"),
    (dict(hq=2, alibi_slopes=[0.5]), "alibi_slopes has 1 entries: it must have one per query head (hq=2)"),
    (dict(batch=2, seqlens_k=[1]), "seqlens_k has 1 entries: it must have one per batch element (batch=2)"),
    (dict(sk=4, seqlens_k=[5]), "seqlens_k[0]=5 is not allowed: it must be in [0, sk=4]"),
    (dict(hq=2, sq=3, d=8, q_strides=[48, 16, 0, 1]), "q stride h=0 is not allowed"),
    (dict(hq=2, sq=3, d=8, q_strides=[48, 8, 8, 1]), "makes elements alias"),
    (dict(dtype="f8"), "problem field 'dtype'='f8' is not one of f16, bf16, f32"),
    (dict(causal="diagonal"), "problem field 'causal'='diagonal' is not one of none, bottom_right, top_left"),
    (dict(layout="sbhd"), "problem field 'layout'='sbhd' is not one of bshd, bhsd"),
    (dict(sq="5"), "problem field 'sq' has the wrong type: \"5\""),
    (dict(q_strides=[1, 2, 3]), "problem field 'q_strides' must list 4 strides [b, s, h, d]"),
    (dict(seq_len=5), "unknown problem field 'seq_len'"),
])
def test_validation_raises_the_cpp_message(fields, message):
    with pytest.raises(UsageError) as e:
        Problem(**fields)
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_numpy_scalars_are_read_as_their_python_values():
    np = pytest.importorskip("numpy")
    p = Problem(hq=np.int64(4), hkv=np.int32(2), scale=np.float32(0.5), alibi_slopes=np.array([0.5, 0.25, 0.5, 0.25]))
    assert (p.hq, p.hkv, p.scale, p.alibi_slopes) == (4, 2, 0.5, (0.5, 0.25, 0.5, 0.25))


def test_problems_are_immutable_and_replace_validates_again():
    p = Problem(hq=4, hkv=2, sq=3, sk=5)
    with pytest.raises(AttributeError, match="immutable"):
        p.sq = 4
    q = p.replace(sq=7)
    assert (q.sq, p.sq) == (7, 3)
    with pytest.raises(UsageError, match="hq=4 is not a multiple of hkv=3"):
        p.replace(hkv=3)
    with pytest.raises(AttributeError, match="no field 'seq'"):
        p.seq


def test_repr_rebuilds_the_problem_and_equal_problems_hash_alike():
    p = Problem(**EVERY_FIELD)
    assert eval(repr(p), {"Problem": Problem}) == p
    assert repr(Problem(d=32)) == "Problem(d=32)"
    assert hash(Problem(**EVERY_FIELD)) == hash(p) and len({p, Problem(**EVERY_FIELD)}) == 1


def test_id_masks_and_warnings_come_from_cpp():
    p = Problem(hq=8, hkv=2, sq=1, sk=8, kv_offset=7, causal="bottom_right")
    assert p.id == "b1_hq8_hkv2_sq1_sk8_d64_f16_causal_off7"
    empty = Problem(sq=4, sk=2, causal="bottom_right")  # rows 0 and 1 sit before the first key
    assert empty.empty_rows == 2
    assert empty.visible_range(0, 0) == (0, -2) and empty.visible_range(0, 3) == (0, 1)
    assert empty.diag_offset(0) == -2
    assert any("see no key" in w for w in empty.warnings())


def test_the_cli_reads_a_problem_as_python_does(cli, tmp_path):
    # Same JSON, same verdict and message: one reader. (check needs arrays; a valid problem with
    # missing files fails on the files, an invalid one on the problem, before any file is read.)
    for fields in (dict(hq=3, hkv=2), dict(seq_len=1), dict(sk=4, seqlens_k=[5])):
        path = tmp_path / "p.json"
        path.write_text(json.dumps(fields))
        r = cli("check", "--problem", path, "--q", "q.npy", "--k", "k.npy", "--v", "v.npy", "--o", "o.npy")
        with pytest.raises(UsageError) as e:
            Problem.from_json(path.read_text())
        assert r.returncode == 2, r.stderr
        assert str(e.value).splitlines()[-1].strip() in r.stderr, (str(e.value), r.stderr)


@pytest.mark.parametrize("fields", [dict(batch=1.7), dict(batch=True), dict(sq=4294967300), dict(causal=True),
                                    dict(dtype="half"), dict(hq=2, hkv=2.0)])
def test_loose_values_get_the_clis_verdict(cli, tmp_path, fields):
    # Values a strict reader refuses and a lenient one narrows: whatever the C++ reader does with
    # them, Python does the same (accepts both, or refuses both with the same message).
    path = tmp_path / "p.json"
    path.write_text(json.dumps(fields))
    r = cli("check", "--problem", path, "--q", tmp_path / "q.npy", "--k", tmp_path / "k.npy", "--v",
            tmp_path / "v.npy", "--o", tmp_path / "o.npy")
    try:
        Problem(**fields)
    except UsageError as e:
        assert r.returncode == 2 and str(e).splitlines()[-1].strip() in r.stderr, (str(e), r.stderr)
    else:  # the problem passed; the CLI then stops at the missing NPY file, not at the problem
        assert "q.npy" in r.stderr, r.stderr


def test_build_info_names_the_commit():
    info = flashprobe.build_info()
    assert info["version"] and info["commit"] and info["backend"] in ("off", "cuda", "hip")
