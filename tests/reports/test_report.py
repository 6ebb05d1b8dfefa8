#!/usr/bin/python3
"""Smoke test of reports/build_report.py: from one record of every schema (made here, shaped as the
tools write them) and from the shipped reports/data, the report builds, has every section, and every
figure it references exists and is a non-empty PNG. Exit 0 pass, 1 fail."""
import json, os, re, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
builder = os.path.join(root, "reports", "build_report.py")
SECTIONS = ["Layouts", "Accuracy", "Property gate", "Mutants", "Performance", "Resources", "Tolerance calibration"]


def sm80_layout():
    def op(rows, cols, slots, f):
        return {"rows": rows, "cols": cols, "lanes": 32, "slots": slots,
                "table": [list(f(l, s)) for l in range(32) for s in range(slots)]}
    return {"A": op(16, 16, 8, lambda l, i: ((l >> 2) + 8 * ((i >> 1) & 1), 2 * (l & 3) + (i & 1) + 8 * (i >> 2))),
            "B": op(16, 8, 4, lambda l, i: (2 * (l & 3) + (i & 1) + 8 * (i >> 1), l >> 2)),
            "C": op(16, 8, 4, lambda l, i: ((l >> 2) + 8 * (i >> 1), 2 * (l & 3) + (i & 1)))}


def header(kind, device=True):
    return {"schema": f"flashprobe.{kind}/1", "commit": "abc123", "date": "2026-11-23T00:00:00Z",
            "device": {"name": "Test GPU", "arch": "sm_90", "driver_version": 13000, "runtime_version": 13000} if device else None}


def run(data, out):
    p = subprocess.run([builder, "--data", data, "--out", out], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        return None
    return open(os.path.join(out, "index.html")).read()


def check(html, out, expect_figs):
    ok = True
    for s in SECTIONS:
        if f"<h2 id='{s.lower().replace(' ', '-')}'>{s}</h2>" not in html:
            print(f"FAIL: section {s} missing")
            ok = False
    figs = re.findall(r"<img src='([^']+)'", html)
    if len(figs) < expect_figs:
        print(f"FAIL: {len(figs)} figure(s), expected at least {expect_figs}")
        ok = False
    for f in figs:
        p = os.path.join(out, f)
        if not os.path.isfile(p) or os.path.getsize(p) < 1000 or open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            print(f"FAIL: figure {f} missing or not a PNG")
            ok = False
    return ok, len(figs)


def main():
    ok = True
    with tempfile.TemporaryDirectory() as d:
        data, out = os.path.join(d, "data"), os.path.join(d, "out")
        os.makedirs(data)
        probe = header("probe") | {"source": "hardware", "atoms": [{"name": "SM80_16x8x16_F32F16F16F32_TN", "verdict": "matches",
                                                                       "derived": sm80_layout()}]}
        grid = header("kernel_grid") | {"cases": [{"kernel": k, "pass": True, "problem": {"dtype": dt, "sk": sk},
                                                   "o": {"error": 1e-3 * (sk + 1) ** 0.1, "margin": 0.2 + 0.01 * sk}}
                                                  for k in ("tiled", "mma") for dt in ("f16", "bf16") for sk in (1, 3, 65, 129)]}
        bench = header("bench") | {"ceilings": {"d2d_copy_gbps": 3000.0, "bf16_gemm_tflops": 790.0},
                                   "results": [{"impl": "flashprobe", "kernel": "mma", "group": "prefill", "median_ms": 1.0,
                                                "case": f"prefill:b{16384 // s}_hq16_hkv16_sq{s}_sk{s}_d128_f16", "tflops": 100 + s / 100, "gbps": 1}
                                               for s in (1024, 2048, 4096)] +
                                              [{"impl": "torch-flash", "kernel": "flash", "group": "decode", "median_ms": 1.0,
                                                "case": f"decode:b8_hq32_hkv32_sq1_sk{s}_d128_f16", "tflops": 1, "gbps": 1000 + s / 100}
                                               for s in (1024, 4096)]}
        res = {"schema": "flashprobe.resources/1", "source": "clang-19 code-object metadata (compiled, not run)", "date": "2026-11-23",
               "kernels": [{"target": "gfx1100", "kernel": "mma_fwd", "vgpr": 128, "agpr": 0, "sgpr": 40, "lds_bytes": 34816,
                            "scratch_bytes": 0, "waves_per_simd": 8}]}
        muts = header("mutants") | {"mutants": [{"name": "softmax_block_not_pow2", "killed": True, "killed_by": "oracle", "counterexample": "sk=3"}]}
        cal = header("calibration", device=False) | {"false_failures": 0, "cases": 10000}
        soak = header("prop_soak") | {"rows": [{"kernel": "mma", "dtype": "bf16", "property": "AgreesWithOracle", "cases": 10010,
                                                "failures": 0, "cases_per_process_s": 30.1}]}
        speed = header("prop_throughput") | {"rc_params": " max_success=60 max_size=400 seed=77",
                                             "rows": [{"kernel": "decode", "property": "AgreesWithOracle", "cases": 60, "seconds": 2.0,
                                                       "inputs_s": 1.0, "kernel_s": 0.5, "kernel_device_s": 0.1, "oracle_s": 0.5}]}
        for i, r in enumerate([probe, grid, bench, res, muts, cal, soak, speed]):
            json.dump(r, open(os.path.join(data, f"r{i}.json"), "w"))
        html = run(data, out)
        if html is None:
            return 1
        good, n = check(html, out, expect_figs=1 + 2 + 2)
        ok &= good
        for needle in ("SM80_16x8x16_F32F16F16F32_TN", "softmax_block_not_pow2", "compiled, not run", "commit: abc123", "Test GPU",
                       "<td>10010</td>", "<td>30.0</td>", "<td>400</td>", "<td>50%</td>"):
            if needle not in html:
                print(f"FAIL: '{needle}' not in the report")
                ok = False
        print(f"synthetic records: {n} figure(s), sections complete: {good}")
        # The shipped real-hardware data builds too.
        html = run(os.path.join(root, "reports", "data"), os.path.join(d, "shipped"))
        if html is None:
            return 1
        good, n = check(html, os.path.join(d, "shipped"), expect_figs=0)
        ok &= good
        print(f"shipped records: {n} figure(s)")
    print("report smoke test: " + ("pass" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
