"""Benchmark records -> runs -> same-run ratios (summary) and one-run figures (details).

A run is one device call: the bench records of one run folder (flashprobe's and the PyTorch
baselines timed beside it). Numbers of different runs are never divided by each other, and a figure
draws one run: every kernel that ran in it, its baselines, its ceilings.

A flashprobe result is a shipped kernel unless its record marks it "variant": true or its name has a
suffix (scripts/gpu/rename_kernel.py names other builds and knobs <kernel>-<what>; `flashprobe bench
--kernel` names the variants of kernels/include/flashprobe/kernels/variants.h <kernel>/<option>=<value>):
variants are drawn in their run's figures, dashed, and never enter the summary.

A run is complete for a group (prefill D64, prefill D64 causal, ..., Whisper, decode) when it timed
the kernel the dispatcher picks for every case of it (bench records since it is recorded as
"dispatched"), or, for older records, every shipped kernel that any current run timed in that group
on that device. The summary's "best" column and the figures come from the newest complete run; a
kernel's own column from the newest run that timed it beside a baseline.

Example:
    runs = bench_runs(recs.of("bench"))
    table = ratio_table(runs, "h100-80gb-hbm3")
"""
import collections, dataclasses, math, re

CASE = re.compile(r"^(?P<group>[a-z]+):b(?P<b>\d+)_hq(?P<hq>\d+)_hkv(?P<hkv>\d+)_sq(?P<sq>\d+)_sk(?P<sk>\d+)_d(?P<d>\d+)"
                  r"_(?P<dtype>f16|bf16|f32)(?P<rest>.*)$")


def parse_case(case):
    m = CASE.match(case)
    if not m:
        return None
    f = {k: (int(v) if v.isdigit() else v) for k, v in m.groupdict().items()}
    f["causal"] = "causal" in f.pop("rest")
    return f


def group_of(f):
    """The summary's group of a parsed case: 'prefill D64 causal', 'Whisper', 'decode'; None for
    custom sweeps."""
    if f is None:
        return None
    if f["group"] == "prefill":
        return f"prefill D{f['d']}" + (" causal" if f["causal"] else "")
    return {"whisper": "Whisper", "decode": "decode"}.get(f["group"])


def group_order(g):
    m = re.match(r"prefill D(\d+)( causal)?", g)
    if m:
        return (0, int(m.group(1)), bool(m.group(2)))
    return (1, 0, False) if g == "Whisper" else (2, 0, False)


def is_variant(x):
    k = str(x.get("kernel", ""))
    return bool(x.get("variant")) or "-" in k or "/" in k


def impl_label(x):
    """flashprobe results by kernel (mma, wgmma, mma-baseline); baselines by backend (flash, cudnn)."""
    if x.get("impl") == "flashprobe":
        return str(x.get("kernel"))
    return str(x.get("impl", "?")).replace("torch-", "")


@dataclasses.dataclass
class BenchRun:
    run: str
    device_key: str
    records: list
    times: dict                 # (label, case) -> median ms over the rounds of this run
    rounds: dict                # (label, case) -> how many timings were taken
    shipped: set                # labels of shipped flashprobe kernels
    variants: set
    baselines: set
    dispatched: dict            # case -> kernel the dispatcher picked (where recorded)
    work: dict                  # case -> (flops, bytes)
    ceilings: dict
    date: str
    commits: list
    timing: str

    def groups(self):
        out = collections.defaultdict(set)
        for (label, case) in self.times:
            g = group_of(parse_case(case))
            if g:
                out[g].add(case)
        return out

    def kernels_in(self, group, which):
        return {lab for (lab, case) in self.times if lab in which and group_of(parse_case(case)) == group}


def is_backward(rec):
    """A backward timing record (`flashprobe bench --backward`, torch_sdpa_bench.py --backward): the
    backward section's (backward.py), never the forward's tables: same case ids, other work."""
    return rec.data.get("pass") == "backward"


def bench_runs(records):
    by_run = collections.defaultdict(list)
    for r in records:
        if not is_backward(r):
            by_run[r.run].append(r)
    runs = []
    for run, recs in sorted(by_run.items()):
        raw = collections.defaultdict(list)
        shipped, variants, baselines, dispatched, ceilings, work = set(), set(), set(), {}, {}, {}
        for r in recs:
            for k, v in (r.data.get("ceilings") or {}).items():
                if isinstance(v, (int, float)):
                    ceilings.setdefault(k, []).append(float(v))
            for x in r.data.get("results", []):
                if not isinstance(x.get("median_ms"), (int, float)) or not x.get("case"):
                    continue
                lab = impl_label(x)
                if isinstance(x.get("flops"), (int, float)) and isinstance(x.get("bytes"), (int, float)):
                    work[x["case"]] = (float(x["flops"]), float(x["bytes"]))
                raw[(lab, x["case"])].append(float(x["median_ms"]))
                if x.get("impl") == "flashprobe":
                    (variants if is_variant(x) else shipped).add(lab)
                    if x.get("dispatched"):
                        dispatched[x["case"]] = x["dispatched"]
                else:
                    baselines.add(lab)
        if not raw:
            continue
        times = {k: sorted(v)[len(v) // 2] for k, v in raw.items()}
        runs.append(BenchRun(run, recs[0].device_key, recs, times, {k: len(v) for k, v in raw.items()}, shipped,
                             variants, baselines, dispatched, work, {k: max(v) for k, v in ceilings.items()},
                             max(r.date for r in recs), sorted({r.commit for r in recs if r.commit}),
                             ", ".join(sorted({str(r.data.get("timing")) for r in recs if r.data.get("timing")}))))
    return sorted(runs, key=lambda b: b.date)


def complete_for(run, group, all_runs):
    """Whether the run timed the dispatcher's kernel on every case of the group (see the module)."""
    cases = run.groups().get(group, set())
    if not cases or not run.baselines:
        return False
    if any(c in run.dispatched for c in cases):
        return all((run.dispatched.get(c), c) in run.times for c in cases if c in run.dispatched)
    seen = set()
    for r in all_runs:
        if r.device_key == run.device_key:
            seen |= r.kernels_in(group, r.shipped)
    return seen <= run.kernels_in(group, run.shipped)


@dataclasses.dataclass
class Ratio:
    gmean: float
    lo: float
    hi: float
    n: int
    run: BenchRun

    def text(self):
        return f"{self.gmean:.2f}"


def ratios(run, group, kernel, baseline):
    """baseline time / kernel time over the group's cases both timed in this run (> 1: flashprobe
    faster). kernel "best": the fastest shipped kernel per case; "dispatched": the dispatcher's."""
    vals = []
    for case in sorted(run.groups().get(group, ())):
        b = run.times.get((baseline, case))
        if b is None:
            continue
        if kernel == "best":
            ks = [run.times[(k, case)] for k in run.shipped if (k, case) in run.times]
            t = min(ks) if ks else None
        elif kernel == "dispatched":
            t = run.times.get((run.dispatched.get(case), case))
        else:
            t = run.times.get((kernel, case))
        if t:
            vals.append(b / t)
    if not vals:
        return None
    return Ratio(math.exp(sum(math.log(v) for v in vals) / len(vals)), min(vals), max(vals), len(vals), run)


@dataclasses.dataclass
class RatioTable:
    groups: list
    baselines: list
    columns: list          # "best", then every shipped kernel
    cells: dict            # (group, column, baseline) -> Ratio
    runs: list             # the runs the cells come from, in footnote order


def ratio_table(runs, device_key):
    mine = [r for r in runs if r.device_key == device_key]
    groups = sorted({g for r in mine for g in r.groups()}, key=group_order)
    baselines = sorted({b for r in mine for b in r.baselines}, key=lambda b: (b != "flash", b != "cudnn", b))
    kernels = sorted({k for r in mine for k in r.shipped})
    cells, used = {}, []
    for g in groups:
        full = [r for r in mine if complete_for(r, g, runs)]
        for b in baselines:
            if full:
                best = ratios(full[-1], g, "best", b)
                if best:
                    cells[(g, "best", b)] = best
            for k in kernels:
                for r in reversed(mine):
                    if k in r.shipped and (x := ratios(r, g, k, b)):
                        cells[(g, k, b)] = x
                        break
    for c in cells.values():
        if c.run not in used:
            used.append(c.run)
    used.sort(key=lambda r: r.date)
    return RatioTable(groups, baselines, ["best"] + kernels, cells, used)
