"""The report's backward section: the backward kernels against the gradient oracle on the GPU
(tests/kernels/test_backward_gpu.cpp's records, kind backward_gpu, else its GoogleTest JSON), the
backward mutants with their shrunk cases, PyTorch's SDPA backward property-tested through the Python
package (torch_props rows of the sdpa-*-bwd subjects), and the backward speed beside PyTorch's flash
and cuDNN backward timed in the same call (bench records with "pass": "backward"). Every table names its records; a
part with no records says so (class 'none'), never an empty pass."""
import html, math

from .details import table
from .checks import _gtest_cases, _gtest_state
from .perf import is_backward


def _newest(recs):
    return max(recs, key=lambda r: (r.date, r.path)) if recs else None


def _src(r):
    return f"{r.path} ({r.day}, {r.commit}, {r.evidence})"


def _none(what):
    return f"<p class='none'>{html.escape(what)}</p>"


def _summed_random(rs):
    """The random-problem records of one run (a soak in shards, one record per seed): their rows
    summed per check and subject, the seeds in the note; a count one of them lacks stays None."""
    sums = {}
    for r in sorted(rs, key=lambda r: (r.data.get("seed") or 0, r.path)):
        for s in r.data.get("rows") or []:
            c = sums.setdefault((s.get("check"), s.get("subject")), {"run": 0, "failed": 0, "seeds": []})
            for k in ("run", "failed"):
                c[k] = c[k] + s[k] if isinstance(c[k], int) and isinstance(s.get(k), int) else None
            c["seeds"].append(str(r.data.get("seed", "?")))
    return [(check, subject, c["run"], c["failed"], f"{len(c['seeds'])} records, seeds {', '.join(c['seeds'])}")
            for (check, subject), c in sums.items()]


def _kernels_of(subject):
    """The kernels a random row speaks for: "mma_bwd_k128 f16" -> {mma_bwd_k128}; an all-kernel run's
    "mma_bwd, tiled_bwd" -> both."""
    return {part.split(" ")[0] for part in str(subject).split(", ") if part}


def _random_rows(dev, rs):
    """The random problems of a device, newest run first: each run's rows (summed over its records, a
    soak in shards), then an older run's rows only for kernels no newer run has (a soak of two
    kernels does not hide the others' larger runs)."""
    by_run = {}
    for r in rs:
        by_run.setdefault(r.run, []).append(r)
    out, covered = [], set()
    for run in sorted(by_run, key=lambda k: max((x.date, x.path) for x in by_run[k]), reverse=True):
        same_run = by_run[run]
        r = _newest(same_run)
        if len(same_run) > 1:
            src = f"{r.run}: {len(same_run)} records ({r.day}, {r.commit}, {r.evidence})"
            got = [[dev, check, subject, n, failed, note, src] for check, subject, n, failed, note in _summed_random(same_run)]
        else:
            got = [[dev, s.get("check"), s.get("subject"), s.get("run"), s.get("failed"), s.get("note", ""), _src(r)]
                   for s in r.data.get("rows") or []]
        out += [g for g in got if not _kernels_of(g[2]) <= covered]
        for g in got:
            covered |= _kernels_of(g[2])
    return out


def gpu_checks(recs):
    """The newest backward_gpu record of each test per device: its rows (check, subject, run, failed,
    note); the random problems summed over every record of a run (a soak run as shards, each its own
    seed), the newest run of each kernel. Devices whose runs predate those records: the newest
    test_backward_gpu GoogleTest JSON, one row per test."""
    out, rows = [], []
    by = {}
    for r in recs.of("backward_gpu"):
        by.setdefault((r.device_key, r.data.get("test")), []).append(r)
    devices_with_records = set()
    for (dev, test), rs in sorted(by.items()):
        if test == "mutants":
            continue
        r = _newest(rs)
        devices_with_records.add(dev)
        if test == "random":
            rows += _random_rows(dev, rs)
            continue
        for s in r.data.get("rows") or []:
            rows.append([dev, s.get("check"), s.get("subject"), s.get("run"), s.get("failed"),
                         s.get("note", ""), _src(r)])
    gt = {}
    for r in recs.of("gtest"):
        if r.name.startswith("test_backward_gpu") and r.device_key not in devices_with_records:
            gt.setdefault((r.device_key, r.name), []).append(r)
    for (dev, name), rs in sorted(gt.items()):
        r = _newest(rs)
        for suite, t in _gtest_cases(r.data):
            state = _gtest_state(t)
            rows.append([dev, f"GoogleTest ({name})", f"{suite}.{t.get('name')}", 0 if state == "skipped" else 1,
                         1 if state == "failed" else 0, "skipped" if state == "skipped" else "", _src(r)])
    if not rows:
        return _none("No GPU records of the backward kernels (scripts/gpu/run-all bwd).")
    out.append(table(["device", "check", "subject", "run", "failed", "note", "record"], rows, "det"))
    return "".join(out)


def mutants(recs):
    rows = []
    for dev in sorted({r.device_key for r in recs.of("backward_gpu")}):
        r = _newest([x for x in recs.of("backward_gpu") if x.device_key == dev and x.data.get("test") == "mutants"])
        if r is None:
            continue
        for m in r.data.get("mutants") or []:
            rows.append([dev, m.get("name"), "killed" if m.get("killed") else "SURVIVED", m.get("case", ""),
                         m.get("shrunk", ""), (m.get("shrunk_failure") or m.get("failure") or "")[:160], _src(r)])
    if not rows:
        return _none("No backward mutant records (test_backward_gpu's EveryBackwardMutantIsKilled writes "
                     "backward-mutants.json).")
    return table(["device", "mutant", "verdict", "killed by case", "shrunk to", "failure", "record"], rows, "det")


def torch_subjects(recs):
    rows = []
    for r in sorted(recs.of("torch_props"), key=lambda r: r.path):
        env = r.data.get("environment") or {}
        for row in r.data.get("runs") or []:
            if not row.get("backward"):
                continue
            rows.append([row.get("subject"), row.get("dtype"), row.get("checked"), row.get("refused"), row.get("failed"),
                         f"{row.get('worst_margin', 0):.2f}", row.get("stopped_by"), f"torch {env.get('torch', '?')}",
                         ((row.get("failure") or {}).get("summary") or "")[:160], _src(r)])
    if not rows:
        return _none("No records of PyTorch's backward (scripts/gpu/run-all torch-props with the sdpa-*-bwd subjects).")
    return table(["subject", "dtype", "cases checked", "refused", "failed", "worst margin", "stopped by", "PyTorch",
                  "failure", "record"], rows, "det")


def speed_rows(recs):
    """Per run (device call) and case: TFLOP/s of each implementation, and each flashprobe kernel's
    ratio to PyTorch's flash backward of the same run and case (None where the run did not time it)."""
    runs = {}
    for r in recs.of("bench"):
        if is_backward(r):
            runs.setdefault(r.run, []).extend((res, r) for res in r.data.get("results") or [] if "tflops" in res)
    out = []
    for run, results in sorted(runs.items()):
        flash = {res["case"]: res["tflops"] for res, _ in results if res.get("impl") == "torch-flash"}
        for res, r in results:
            ref = flash.get(res["case"])
            ratio = res["tflops"] / ref if ref and res.get("impl") == "flashprobe" else None
            name = res.get("kernel") if res.get("impl") == "flashprobe" else res.get("impl")
            out.append(dict(run=run, case=res["case"], impl=name, tflops=res["tflops"], median_ms=res.get("median_ms"),
                            ratio=ratio, torch=r.data.get("torch"), record=r))
    return out


def _gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def speed_summary_rows(recs):
    """Per run and flashprobe kernel (and the best of them per case: the fastest kernel the run timed
    on it), the geometric mean and range of its same-call ratio to PyTorch's flash and to cuDNN's
    backward over the cases where both were timed, with the number of cases; the kernel the
    dispatcher picked (the records' "dispatched") marked. A ratio never divides two calls' numbers."""
    per_run = {}
    for x in speed_rows(recs):
        per_run.setdefault(x["run"], []).append(x)
    out = []
    for run, xs in sorted(per_run.items()):
        base = {b: {x["case"]: x["tflops"] for x in xs if x["impl"] == f"torch-{b}"} for b in ("flash", "cudnn")}
        ours = {}
        dispatched = set()
        for x in xs:
            if not x["impl"].startswith("torch-"):
                ours.setdefault(x["impl"], {})[x["case"]] = x["tflops"]
        for r in {id(x["record"]): x["record"] for x in xs}.values():
            dispatched |= {res.get("dispatched") for res in r.data.get("results") or [] if res.get("dispatched")}
        best = {}
        for k, cases in ours.items():
            for c, t in cases.items():
                best[c] = max(best.get(c, 0.0), t)
        for name, cases in [("best of ours", best)] + sorted(ours.items()):
            cells = []
            for b in ("flash", "cudnn"):
                rs = [t / base[b][c] for c, t in cases.items() if base[b].get(c)]
                cells.append((len(rs), _gmean(rs), min(rs), max(rs)) if rs else (0, None, None, None))
            if not cells[0][0] and not cells[1][0]:
                continue
            out.append(dict(run=run, impl=name, dispatched=name in dispatched, flash=cells[0], cudnn=cells[1]))
    return out


def _ratio_cell(c):
    n, g, lo, hi = c
    return f"{g:.3f} ({lo:.3f}-{hi:.3f}), {n} cases" if n else "not timed"


def speed(recs):
    rows = speed_rows(recs)
    if not rows:
        return _none("No backward timings (scripts/gpu/run-all bwd-bench).")
    summ = speed_summary_rows(recs)
    return ("<p>Per call, each kernel's speed over PyTorch's flash and cuDNN backward timed in the same call "
            "(geometric mean, min-max, over the cases both timed; &gt; 1: flashprobe faster); best of ours: the "
            "fastest kernel the call timed on each case.</p>" +
            table(["run", "kernel", "vs torch-flash", "vs torch-cudnn"],
                  [[x["run"], x["impl"] + (" (dispatched)" if x["dispatched"] else ""), _ratio_cell(x["flash"]),
                    _ratio_cell(x["cudnn"])] for x in summ], "det") +
            "<p>TFLOP/s with FlashAttention's convention (the backward counts 2.5x the forward's FLOPs); "
            "ratio: the kernel's TFLOP/s over PyTorch's flash backward on the same case in the same call.</p>" +
            table(["run", "case", "implementation", "TFLOP/s", "median ms", "vs torch-flash", "record"],
                  [[x["run"], x["case"], x["impl"] + (f" (torch {x['torch']})" if x["torch"] else ""),
                    f"{x['tflops']:.2f}", f"{x['median_ms']:.3f}" if x["median_ms"] is not None else "",
                    f"{x['ratio']:.2f}x" if x["ratio"] is not None else "", _src(x["record"])] for x in rows], "det"))


def backward_section(recs):
    return "".join([
        "<h2 id='backward'>Backward</h2>",
        "<p>dQ, dK, dV checked against the gradient oracle with the tolerance model of "
        "oracle/BACKWARD_TOLERANCE.md (error &le; k &middot; the emulated FlashAttention-2 backward's error + a floor).</p>",
        "<h3 id='backward-gpu'>The backward kernels on the GPU: oracle agreement, determinism, GQA, varlen, chunks</h3>",
        gpu_checks(recs),
        "<h3 id='backward-mutants'>Backward mutants, each with its shrunk case</h3>", mutants(recs),
        "<h3 id='backward-torch'>PyTorch's SDPA backward through the Python package</h3>", torch_subjects(recs),
        "<h3 id='backward-speed'>Backward speed beside PyTorch's flash and cuDNN backward</h3>", speed(recs),
    ])
