#!/usr/bin/env python3
"""Time PyTorch's SDPA backends (flash, cuDNN, efficient) on flashprobe's benchmark grid.

Writes the same record format as `flashprobe bench` (schema flashprobe.bench/1, impl "torch-<backend>"),
plus the device ceilings measured in the same run: a 1 GiB device-to-device copy (bytes read +
written) and an 8192^3 bf16 matrix product. Timing: CUDA events around each repetition after
warm-up, median of >= 10 repetitions and >= 0.25 s, inputs rotated over enough sets to exceed 3x L2,
random inputs (never zeros). The grid mirrors cli/bench/bench_grid.cpp case for case (same ids), so
the report pairs each flashprobe timing with the vendor kernels on the same shape.

Usage (on a machine with PyTorch and a GPU):  python3 torch_sdpa_bench.py --json torch.json [--quick]
"""
import argparse, datetime, json, math, os, socket, subprocess, sys, time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def grid(quick):
    cases = []
    seqs = [1024, 4096] if quick else [512, 1024, 2048, 4096, 8192, 16384]
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                for s in seqs:
                    cases.append(dict(group="prefill", batch=16384 // s, hq=2048 // d, hkv=2048 // d, sq=s, sk=s, d=d,
                                      dtype=dt, causal=causal))
    for dt in ("f16", "bf16"):
        for b in (1, 4):
            cases.append(dict(group="whisper", batch=b, hq=16, hkv=16, sq=1500, sk=1500, d=64, dtype=dt, causal=False))
    keys = [4096, 32768] if quick else [1024, 2048, 4096, 8192, 16384, 32768]
    for dt in ("f16", "bf16"):
        for b in (1, 8):
            for sk in keys:
                cases.append(dict(group="decode", batch=b, hq=32, hkv=32, sq=1, sk=sk, d=128, dtype=dt, causal=False))
    return cases


def case_id(c):
    # Same spelling as AttnProblem::id() for these shapes.
    s = f"b{c['batch']}_hq{c['hq']}_hkv{c['hkv']}_sq{c['sq']}_sk{c['sk']}_d{c['d']}_{c['dtype']}"
    if c["causal"]:
        s += "_causal"
    return c["group"] + ":" + s


def flops(c):
    f = 4.0 * c["batch"] * c["hq"] * c["sq"] * c["sk"] * c["d"]
    return f / 2 if c["causal"] and c["sq"] == c["sk"] else f


def nbytes(c):
    q = c["batch"] * c["sq"] * c["hq"] * c["d"] * 2
    kv = c["batch"] * c["sk"] * c["hkv"] * 2 * c["d"] * 2
    o = c["batch"] * c["sq"] * c["hq"] * c["d"] * 2
    return q + kv + o + c["batch"] * c["hq"] * c["sq"] * 4


def time_reps(call, divisor=1, min_reps=10, max_reps=200, min_seconds=0.25):
    """CUDA events around each call(rep) until min_reps and min_seconds; the median (min, max) of the
    device time per rep / divisor, and the median host time of one call (launch_host_us)."""
    ms, host, total, r = [], [], 0.0, 0
    while r < max_reps and (r < min_reps or total < min_seconds * 1e3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        h0 = time.perf_counter()
        call(r)
        host.append((time.perf_counter() - h0) * 1e6)
        b.record()
        b.synchronize()
        t = a.elapsed_time(b)
        ms.append(t / divisor)
        total += t
        r += 1
    ms.sort()
    host.sort()
    n = len(ms)
    med = ms[n // 2] if n % 2 else (ms[n // 2 - 1] + ms[n // 2]) / 2
    # launch_host_us: the host time of one call (inside the events, as in flashprobe bench).
    return dict(median_ms=med, min_ms=ms[0], max_ms=ms[-1], reps=n, launch_host_us=host[n // 2])


def time_events(fn, min_reps=10, max_reps=200, min_seconds=0.25, warmup=3):
    for i in range(warmup):
        fn(i)
    torch.cuda.synchronize()
    return time_reps(lambda r: fn(warmup + r), 1, min_reps, max_reps, min_seconds)


def time_graph(fn, sets, min_reps=10, max_reps=200, min_seconds=0.25, warmup=3):
    """One CUDA graph calling fn once per input set, replayed between events; per-call time = replay
    time / sets. The Python and dispatch work happens at capture, outside the timed region, as in
    flashprobe bench --timing graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(max(warmup, 1)):
            fn(i)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(sets):
            fn(i)
    for _ in range(warmup):
        g.replay()
    torch.cuda.synchronize()
    return dict(time_reps(lambda r: g.replay(), sets, min_reps, max_reps, min_seconds), timing="graph")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", default="torch_bench.json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backends", nargs="+", default=list(BACKENDS))
    ap.add_argument("--min-seconds", type=float, default=0.25)
    ap.add_argument("--group", action="append", choices=["prefill", "whisper", "decode"],
                    help="only these groups (repeatable; default all), as flashprobe bench --group")
    ap.add_argument("--dtype", action="append", choices=["f16", "bf16"],
                    help="only cases of these input types (repeatable; default all), as flashprobe bench --dtype")
    ap.add_argument("--timing", choices=["graph", "launch"], default="graph",
                    help="graph: replays of a captured CUDA graph (kernel time, the default); launch: events around "
                         "each call (includes Python and dispatch), as flashprobe bench --timing")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_sdpa_bench: no CUDA device", file=sys.stderr)
        return 2
    dev = torch.cuda.get_device_properties(0)
    l2 = getattr(dev, "L2_cache_size", 50 << 20)
    torch.manual_seed(0)
    # Ceilings, same run.
    n = 1 << 29  # 1 GiB of f16
    src = torch.randn(n, device="cuda", dtype=torch.float16)
    dst = torch.empty_like(src)
    t = time_events(lambda i: dst.copy_(src), min_seconds=a.min_seconds)
    copy_gbps = 2 * src.numel() * 2 / (t["median_ms"] * 1e-3) / 1e9
    del src, dst
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    t = time_events(lambda i: x @ y, min_seconds=a.min_seconds)
    gemm_tflops = 2 * m ** 3 / (t["median_ms"] * 1e-3) / 1e12
    del x, y
    print(f"device {dev.name}: copy {copy_gbps:.0f} GB/s, bf16 GEMM {gemm_tflops:.0f} TFLOP/s")
    # The GPU machine gets a copy of the tree without .git: scripts/gpu/run-all passes the commit of
    # the carried flashprobe build in FLASHPROBE_COMMIT.
    commit = os.environ.get("FLASHPROBE_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
        cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    rec = {"schema": "flashprobe.bench/1", "tool": "reports/baselines/torch_sdpa_bench.py", "commit": commit,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "host": socket.gethostname(),
           "device": {"name": dev.name, "arch": f"sm_{dev.major}{dev.minor}", "multiprocessors": dev.multi_processor_count},
           "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "ceilings": {"d2d_copy_gbps": copy_gbps, "bf16_gemm_tflops": gemm_tflops},
           "timing": a.timing,
           "method": ("one CUDA graph calling SDPA once per input set, replayed between events, per-call time = "
                      "replay / sets" if a.timing == "graph" else "CUDA events around each call") +
                     "; 3 warm-ups; median of >= 10 reps and >= %g s; inputs rotated" % a.min_seconds,
           "results": []}
    print(f"{'impl':16s} {'case':48s} {'median ms':>10s} {'TFLOP/s':>9s} {'GB/s':>8s}")
    for c in grid(a.quick):
        if a.group and c["group"] not in a.group:
            continue
        if a.dtype and c["dtype"] not in a.dtype:
            continue
        dt = torch.float16 if c["dtype"] == "f16" else torch.bfloat16
        shape_q = (c["batch"], c["hq"], c["sq"], c["d"])
        shape_k = (c["batch"], c["hkv"], c["sk"], c["d"])
        set_bytes = nbytes(c)
        sets = max(1, min(8, math.ceil(3 * l2 / set_bytes)))
        qs = [torch.randn(shape_q, device="cuda", dtype=dt) for _ in range(sets)]
        ks = [torch.randn(shape_k, device="cuda", dtype=dt) for _ in range(sets)]
        vs = [torch.randn(shape_k, device="cuda", dtype=dt) for _ in range(sets)]
        for name in a.backends:
            try:
                with sdpa_kernel(BACKENDS[name]):
                    def run(i):
                        j = i % sets
                        torch.nn.functional.scaled_dot_product_attention(qs[j], ks[j], vs[j], is_causal=c["causal"])
                    run(0)  # a backend that refuses the shape raises here
                    torch.cuda.synchronize()
                    if a.timing == "launch":
                        t = dict(time_events(run, min_seconds=a.min_seconds), timing="launch")
                    else:
                        try:
                            t = time_graph(run, sets, min_seconds=a.min_seconds)
                        except RuntimeError as e:  # not capturable: timed per call, and said so
                            torch.cuda.synchronize()
                            t = dict(time_events(run, min_seconds=a.min_seconds), timing="launch",
                                     graph_error=str(e).splitlines()[0][:200])
            except Exception as e:  # the backend refused the shape
                rec["results"].append({"impl": "torch-" + name, "case": case_id(c), "group": c["group"],
                                       "refused": str(e).splitlines()[0][:200]})
                continue
            tf = flops(c) / (t["median_ms"] * 1e-3) / 1e12
            gb = set_bytes / (t["median_ms"] * 1e-3) / 1e9
            print(f"{'torch-' + name:16s} {case_id(c)[:48]:48s} {t['median_ms']:10.4f} {tf:9.1f} {gb:8.0f}", flush=True)
            rec["results"].append(dict(impl="torch-" + name, kernel=name, group=c["group"], case=case_id(c),
                                       flops=flops(c), bytes=set_bytes, tflops=tf, gbps=gb, input_sets=sets, **t))
        del qs, ks, vs
        torch.cuda.empty_cache()
    with open(a.json, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"wrote {len(rec['results'])} record(s) to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
