#!/usr/bin/env python3
"""Time PyTorch's SDPA backends (flash, cuDNN, efficient) on flashprobe's benchmark grid.

Writes the same record format as `flashprobe bench` (schema flashprobe.bench/1, impl "torch-<backend>"),
plus the device ceilings measured in the same run: a 1 GiB device-to-device copy (bytes read +
written) and an 8192^3 bf16 matrix product. Timing: CUDA events around each repetition after
warm-up, median of >= 10 repetitions and >= 0.25 s, inputs rotated over enough sets to exceed 3x L2,
random inputs (never zeros). The grid mirrors cli/bench/bench_grid.cpp case for case (same ids), so
the report pairs each flashprobe timing with the vendor kernels on the same shape.

Usage (on a machine with PyTorch and a GPU):  python3 torch_sdpa_bench.py --json torch.json [--quick]
       custom shapes, as `flashprobe bench --problem`:  python3 torch_sdpa_bench.py --problem sweep.json
       the backward, as `flashprobe bench --backward`:  python3 torch_sdpa_bench.py --backward --json b.json
--backward times autograd's dQ, dK, dV of one retained forward under each backend on the same cases
as `flashprobe bench --backward` (decode left out; FLOPs 2.5x the forward's, FlashAttention's
convention), with CUDA events around each call (autograd's backward is not captured in a graph
here: --timing launch); the records carry "pass": "backward", as flashprobe's do.
"""
import argparse, datetime, json, math, os, socket, subprocess, sys, time

# PyTorch is imported in main(): the grid and problem parsing stay usable (and tested) without it.
torch = None
BACKEND_NAMES = ("flash", "cudnn", "efficient")


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


# The problem fields PyTorch's SDPA call here can express (flashprobe's problem JSON has more).
CUSTOM_FIELDS = {"batch", "hq", "hkv", "sq", "sk", "d", "dv", "dtype", "causal", "scale"}


def custom_cases(paths):
    """Group "custom": the problems in these files (a problem object or an array of them), as
    flashprobe bench --problem reads them. Raises ValueError naming the file, entry and field for what
    SDPA cannot run here."""
    cases = []
    for path in paths:
        with open(path) as f:
            j = json.load(f)
        entries = j if isinstance(j, list) else [j]
        if not entries:
            raise ValueError(f"{path}: an empty array (expected problem objects)")
        for n, e in enumerate(entries):
            where = f"{path}[{n}]" if isinstance(j, list) else path
            if not isinstance(e, dict):
                raise ValueError(f"{where}: a problem must be a JSON object")
            extra = sorted(set(e) - CUSTOM_FIELDS)
            if extra:
                raise ValueError(f"{where}: field(s) {', '.join(extra)} not supported by this baseline "
                                 f"(supported: {', '.join(sorted(CUSTOM_FIELDS))})")
            # Defaults as flashprobe's AttnProblem has them.
            c = dict(group="custom", batch=e.get("batch", 1), hq=e.get("hq", 1), hkv=e.get("hkv", 1),
                     sq=e.get("sq", 1), sk=e.get("sk", 1), d=e.get("d", 64), dtype=e.get("dtype", "f16"), causal="none",
                     scale=e.get("scale", 0))
            for k in ("batch", "hq", "hkv", "sq", "sk", "d"):
                if isinstance(c[k], bool) or not isinstance(c[k], int) or c[k] < 1:
                    raise ValueError(f"{where}: '{k}'={c[k]!r} must be a positive integer")
            if e.get("dv", c["d"]) != c["d"]:
                raise ValueError(f"{where}: dv={e['dv']} differs from d={c['d']}; SDPA's flash/cuDNN paths need dv == d here")
            if c["dtype"] not in ("f16", "bf16"):
                raise ValueError(f"{where}: dtype={c['dtype']!r} is not one of f16, bf16")
            if c["hq"] % c["hkv"]:
                raise ValueError(f"{where}: hq={c['hq']} is not a multiple of hkv={c['hkv']}")
            cz = e.get("causal", "none")
            if isinstance(cz, bool):  # as flashprobe's reader: true is ambiguous (torch's is_causal is top_left)
                raise ValueError(f"{where}: 'causal' = {json.dumps(cz)} is not accepted: write \"bottom_right\" (the "
                                 "KV-cache diagonal), \"top_left\" (torch's is_causal) or \"none\"")
            if cz not in ("none", "bottom_right", "top_left"):
                raise ValueError(f"{where}: causal={cz!r} is not one of none, bottom_right, top_left")
            # SDPA's is_causal aligns the mask top-left; bottom-right equals it only when sq == sk.
            if cz == "bottom_right" and c["sq"] != c["sk"]:
                raise ValueError(f"{where}: causal bottom_right with sq={c['sq']} != sk={c['sk']}: SDPA's is_causal "
                                 "is top-left; use \"causal\": \"top_left\" or sq == sk")
            c["causal"] = cz
            cases.append(c)
    return cases


def case_id(c):
    # Same spelling as AttnProblem::id() for these shapes.
    s = f"b{c['batch']}_hq{c['hq']}_hkv{c['hkv']}_sq{c['sq']}_sk{c['sk']}_d{c['d']}_{c['dtype']}"
    if c["causal"] in (True, "bottom_right"):
        s += "_causal"
    elif c["causal"] == "top_left":
        s += "_causalTL"
    if c.get("scale"):
        s += "_scale%g" % c["scale"]
    return c["group"] + ":" + s


def flops(c):
    if c["group"] == "custom":  # visible (query, key) pairs, as flashprobe bench counts custom problems
        sq, sk = c["sq"], c["sk"]
        if c["causal"] == "none":
            pairs = sq * sk
        else:
            diag = sk - sq if c["causal"] == "bottom_right" else 0
            pairs = sum(max(0, min(i + diag, sk - 1) + 1) for i in range(sq))
        return 4.0 * c["d"] * c["batch"] * c["hq"] * pairs
    f = 4.0 * c["batch"] * c["hq"] * c["sq"] * c["sk"] * c["d"]
    return f / 2 if c["causal"] and c["sq"] == c["sk"] else f


def backward_flops(c):
    """FlashAttention's backward convention, as flashprobe's BenchCase::backward_flops: 2.5x the forward's."""
    return 2.5 * flops(c)


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


def time_backward(backend, sdpa_kernel, c, q, k, v, do, min_seconds):
    """autograd's backward of one forward under `backend` (the graph retained), events around each call."""
    with sdpa_kernel(backend):
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=c["causal"] not in (False, "none"),
                                                             scale=c.get("scale") or None, enable_gqa=c["hq"] != c["hkv"])

        def run(i):
            torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
        run(0)  # a backend whose backward refuses the shape raises here
        torch.cuda.synchronize()
        return dict(time_events(run, min_seconds=min_seconds), timing="launch")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", default="torch_bench.json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backends", nargs="+", default=list(BACKEND_NAMES), choices=BACKEND_NAMES)
    ap.add_argument("--min-seconds", type=float, default=0.25)
    ap.add_argument("--group", action="append", choices=["prefill", "whisper", "decode"],
                    help="only these groups (repeatable; default all), as flashprobe bench --group")
    ap.add_argument("--dtype", action="append", choices=["f16", "bf16"],
                    help="only cases of these input types (repeatable; default all), as flashprobe bench --dtype")
    ap.add_argument("--problem", action="append",
                    help="time these problems instead of the grid (group custom): a problem JSON file or an array "
                         "of them (repeatable), as flashprobe bench --problem")
    ap.add_argument("--backward", action="store_true",
                    help="time the backward (dQ, dK, dV) instead, as flashprobe bench --backward (decode left out)")
    ap.add_argument("--timing", choices=["graph", "launch"], default="graph",
                    help="graph: replays of a captured CUDA graph (kernel time, the default); launch: events around "
                         "each call (includes Python and dispatch), as flashprobe bench --timing")
    a = ap.parse_args()
    cases = None
    if a.problem:
        if a.quick or a.group:
            print("torch_sdpa_bench: --problem replaces the grid: it does not combine with --quick or --group",
                  file=sys.stderr)
            return 2
        try:
            cases = custom_cases(a.problem)
        except (OSError, ValueError) as e:
            print(f"torch_sdpa_bench: --problem {e}", file=sys.stderr)
            return 2
    if a.backward:
        a.timing = "launch"
    global torch
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
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
                     ("; the backward: torch.autograd.grad of one retained forward, dO random, FLOPs 2.5x the "
                      "forward's" if a.backward else "") +
                     "; 3 warm-ups; median of >= 10 reps and >= %g s; inputs rotated" % a.min_seconds,
           "results": []}
    if a.backward:
        rec["pass"] = "backward"
    print(f"{'impl':16s} {'case':48s} {'median ms':>10s} {'TFLOP/s':>9s} {'GB/s':>8s}")
    for c in cases if cases is not None else grid(a.quick):
        if a.group and c["group"] not in a.group:
            continue
        if a.dtype and c["dtype"] not in a.dtype:
            continue
        if a.backward and c["group"] == "decode":
            continue
        dt = torch.float16 if c["dtype"] == "f16" else torch.bfloat16
        shape_q = (c["batch"], c["hq"], c["sq"], c["d"])
        shape_k = (c["batch"], c["hkv"], c["sk"], c["d"])
        set_bytes = nbytes(c)
        sets = 1 if a.backward else max(1, min(8, math.ceil(3 * l2 / set_bytes)))
        qs = [torch.randn(shape_q, device="cuda", dtype=dt) for _ in range(sets)]
        ks = [torch.randn(shape_k, device="cuda", dtype=dt) for _ in range(sets)]
        vs = [torch.randn(shape_k, device="cuda", dtype=dt) for _ in range(sets)]
        if a.backward:
            do = torch.randn(shape_q, device="cuda", dtype=dt)
            for x in (qs[0], ks[0], vs[0]):
                x.requires_grad_(True)
        for name in a.backends:
            try:
                if a.backward:
                    t = time_backward(backends[name], sdpa_kernel, c, qs[0], ks[0], vs[0], do, a.min_seconds)
                    tf = backward_flops(c) / (t["median_ms"] * 1e-3) / 1e12
                    print(f"{'torch-' + name:16s} {case_id(c)[:48]:48s} {t['median_ms']:10.4f} {tf:9.1f}", flush=True)
                    rec["results"].append(dict(impl="torch-" + name, kernel=name, group=c["group"], case=case_id(c),
                                               flops=backward_flops(c), tflops=tf, input_sets=1, **t, **{"pass": "backward"}))
                    continue
                with sdpa_kernel(backends[name]):
                    def run(i):
                        j = i % sets
                        torch.nn.functional.scaled_dot_product_attention(
                            qs[j], ks[j], vs[j], is_causal=c["causal"] not in (False, "none"),
                            scale=c.get("scale") or None, enable_gqa=c["hq"] != c["hkv"])
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
