#!/usr/bin/env python3
"""scripts/gpu/run-all's tests stage with stand-in binaries: one that passes, one that dies before
GoogleTest's summary. The dead one must leave a record the report counts as failed (no silent pass:
without it the summary showed an older passing run of the same binary)."""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "reports"))
from fpreport import checks, records  # noqa: E402

PASSES = "#!/usr/bin/env bash\necho '[==========] 2 tests from 1 test suite ran.'\necho '[  PASSED  ] 2 tests.'\n"
DIES = "#!/usr/bin/env bash\necho '[ RUN      ] Variants/KernelGrid.X'\necho terminate called; exit 134\n"


def standin_tree(d, executables, gpu_scripts=()):
    """Writes each (path relative to d, body) as an executable stand-in and links scripts/gpu/<name> to the
    repository's own script for each of gpu_scripts: the tree run-all runs in."""
    for rel, body in executables:
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, 0o755)
    os.makedirs(os.path.join(d, "scripts", "gpu"), exist_ok=True)
    for script in gpu_scripts:
        os.symlink(os.path.join(ROOT, "scripts", "gpu", script), os.path.join(d, "scripts", "gpu", script))


def flag_values(args, flag):
    """The value after each occurrence of flag in a split command line."""
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


class RunAllTests(unittest.TestCase):
    def test_a_binary_that_dies_leaves_a_failed_record(self):
        with tempfile.TemporaryDirectory() as d:
            tests = os.path.join(d, ".device-carry", "tests")
            os.makedirs(tests)
            for name, body in (("test_fine", PASSES), ("test_dies", DIES)):
                with open(os.path.join(tests, name), "w") as f:
                    f.write(body)
                os.chmod(os.path.join(tests, name), 0o755)
            out = os.path.join(d, "out")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "tests"], cwd=d,
                               env=dict(os.environ, OUT=out), capture_output=True, text=True, timeout=120)
            self.assertIn("test_dies: rc=134 run 0, skipped 0, failed 0 (no GoogleTest summary", p.stdout)
            self.assertIn("test_fine: rc=0 run 2, skipped 0, failed 0", p.stdout)
            res = os.path.join(d, "res", "h100", "run")
            os.makedirs(res)
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                t.extractall(os.path.join(d, "res", "h100", "run"))
            names = os.listdir(os.path.join(res, "results"))
            self.assertIn("crashed-test_dies.json", names)
            self.assertNotIn("crashed-test_fine.json", names)
            with open(os.path.join(res, "results", "crashed-test_dies.json")) as f:
                json.load(f)  # well-formed
            recs = records.load([os.path.join(d, "res")])
            items = [i for r in recs.of("gpu_run") for i in checks.items_of(r)]
            self.assertEqual([(i.check, i.subject, i.run, i.skipped, i.failed) for i in items],
                             [("tests", "test_dies", 1, 0, 1)])

    def test_mutation_stage_keeps_the_gate_ledger_of_the_props_stage(self):
        """props then mutation in one call: both binaries write prop_throughput.json (and test_mutation its
        mutants.json) into $FLASHPROBE_RECORD_DIR. The gate's ledger must survive in results/ (the mutation
        stage writes under results/mutation/), and the report reads the gate from it and the kills from
        mutants.json (2026-11-26-gate-ada6362 lost the gate's ledger to the mutants' one)."""
        ledger = """#!/usr/bin/env bash
printf '{"schema": "flashprobe.prop_throughput/1", "rows": [{"kernel": "%s", "property": "A", "status": "%s", "cases": 9}]}' \
  KERNEL STATUS > "$FLASHPROBE_RECORD_DIR/prop_throughput.json"
EXTRA
echo '[  PASSED  ] 1 test.'
"""
        mutants = """printf '{"schema": "flashprobe.mutants/1", "mutants": [{"name": "causal_top_left", "killed": true}]}' \
  > "$FLASHPROBE_RECORD_DIR/mutants.json"
"""
        with tempfile.TemporaryDirectory() as d:
            tests = os.path.join(d, ".device-carry", "tests")
            os.makedirs(tests)
            for name, kernel, status, extra in (("test_kernel_props", "mma", "passed", ""),
                                                ("test_mutation", "mutant/causal_top_left/A", "failed", mutants)):
                with open(os.path.join(tests, name), "w") as f:
                    f.write(ledger.replace("KERNEL", kernel).replace("STATUS", status).replace("EXTRA", extra))
                os.chmod(os.path.join(tests, name), 0o755)
            out = os.path.join(d, "out")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "props", "mutation"], cwd=d,
                               env=dict(os.environ, OUT=out), capture_output=True, text=True, timeout=120)
            self.assertIn("test_mutation: rc=0 run 1", p.stdout)
            res = os.path.join(d, "res", "h100", "run")
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                t.extractall(res)
            with open(os.path.join(res, "results", "prop_throughput.json")) as f:
                self.assertEqual(json.load(f)["rows"][0]["kernel"], "mma")  # the gate's, not overwritten
            with open(os.path.join(res, "results", "mutation", "prop_throughput.json")) as f:
                self.assertEqual(json.load(f)["rows"][0]["kernel"], "mutant/causal_top_left/A")
            recs = records.load([os.path.join(d, "res")])
            items = [(i.check, i.subject, i.run, i.skipped, i.failed) for rs in recs.by_kind.values() for r in rs
                     for i in checks.items_of(r)]
            self.assertIn(("gate", "mma", 1, 0, 0), items)
            self.assertIn(("mutants", "causal_top_left", 1, 0, 0), items)
            self.assertEqual([i for i in items if i[0] == "gate"], [("gate", "mma", 1, 0, 0)])

    def test_gate_stage_gates_every_forward_kernel_and_the_example_plugin(self):
        """The gate stage: one `flashprobe gate` over the forward kernels `list kernels` names (not the
        backward ones) and the example plug-in, its JUnit and record in the results."""
        fake = """#!/usr/bin/env bash
case $1 in
  --version) echo "flashprobe 0.1.0 (commit abc1234, backend cuda)" ;;
  list) printf 'kernels (3):\n  mma: tensor cores\n  tiled: scalar\n  mma_bwd (backward): gradients\n' ;;
  gate) echo "$@" > "$STANDIN_ARGS"
        while (($#)); do case $1 in --junit) echo '<testsuites/>' > "$2" ;; --json) echo '{"schema": "flashprobe.gate/1", "rows": []}' > "$2" ;; esac; shift; done
        echo "gate: 2 subject x property: 2 run, 0 not exercised (0 allowed), 0 failed -> PASSED" ;;
esac
"""
        with tempfile.TemporaryDirectory() as d:
            carry = os.path.join(d, ".device-carry")
            os.makedirs(os.path.join(carry, "plugins"))
            exe = os.path.join(carry, "flashprobe")
            with open(exe, "w") as f:
                f.write(fake)
            os.chmod(exe, 0o755)
            out, argf = os.path.join(d, "out"), os.path.join(d, "args.txt")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "gate"], cwd=d,
                               env=dict(os.environ, OUT=out, STANDIN_ARGS=argf), capture_output=True, text=True, timeout=120)
            self.assertIn("gate: rc=0", p.stdout)
            self.assertIn("-> PASSED", p.stdout)
            with open(argf) as f:
                args = f.read().split()
            self.assertEqual(args[0], "gate")
            kernels = [args[i + 1] for i, a in enumerate(args) if a == "--kernel"]
            self.assertEqual(kernels, ["mma", "tiled"])
            self.assertTrue(args[args.index("--plugin") + 1].endswith("/plugins/libfp_naive_plugin.so"))
            for opt in ("--junit", "--json", "--cases", "--time-budget"):
                self.assertIn(opt, args)
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                names = [os.path.basename(n) for n in t.getnames()]
            self.assertIn("gate-builtin.xml", names)
            self.assertIn("gate-builtin.json", names)

    def test_vs_cudnn_stage_checks_variants_before_timing_and_writes_the_table(self):
        """The vs-cudnn stage: a variant is timed only after its grid and its gate passed; bench and
        PyTorch time the prefill and Whisper groups; cudnn_table.py writes vs-cudnn.json and .md."""
        fake = """#!/usr/bin/env bash
case $1 in
  --version) echo "flashprobe 0.1.0 (commit abc1234, backend cuda)" ;;
  gate) echo "gate $*" >> "$STANDIN_ARGS"
        while (($#)); do case $1 in --junit) echo '<testsuites/>' > "$2" ;; --json) echo '{}' > "$2" ;; esac; shift; done
        echo "gate: 1 subject x property: 1 run, 0 not exercised (0 allowed), 0 failed -> PASSED" ;;
  bench) echo "bench $*" >> "$STANDIN_ARGS"
         ks=(); while (($#)); do case $1 in --kernel) ks+=("$2") ;; --json) js=$2 ;; esac; shift; done
         python3 - "$js" "${ks[@]}" <<'PY'
import json, sys
sys.path.insert(0, "reports/baselines")
import torch_sdpa_bench as t
cs = [c for c in t.grid(False) if c["group"] in ("prefill", "whisper")]
res = [{"impl": "flashprobe", "kernel": k, "group": c["group"], "case": t.case_id(c), "median_ms": 1.25,
        "tflops": t.flops(c) / 1.25e-3 / 1e12, "timing": "graph", "dispatched": "wgmma"} for c in cs for k in sys.argv[2:]]
json.dump({"commit": "abc1234", "results": res}, open(sys.argv[1], "w"))
PY
         ;;
esac
"""
        grid = """#!/usr/bin/env bash
echo "grid $*" >> "$STANDIN_ARGS"
case "$*" in *wgmma_good*) echo '[  PASSED  ] 1 test.' ;; *) echo '[  FAILED  ] 1 test, listed below:'; exit 1 ;; esac
"""
        torch = """import json, os, sys
exec(open(os.path.join(os.environ["REAL_ROOT"], "reports", "baselines", "torch_sdpa_bench.py")).read().split("def main(")[0])
if __name__ == "__main__":
    a = sys.argv
    with open(os.environ["STANDIN_ARGS"], "a") as f:
        f.write("torch " + " ".join(a[1:]) + "\\n")
    res = [{"impl": "torch-" + b, "kernel": b, "group": c["group"], "case": case_id(c), "median_ms": 1.0,
            "tflops": flops(c) / 1e-3 / 1e12, "timing": "graph"} for c in grid(False) if c["group"] in ("prefill", "whisper") for b in ("cudnn", "flash")]
    json.dump({"device": {"name": "stand-in"}, "results": res}, open(a[a.index("--json") + 1], "w"))
"""
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/flashprobe", fake), (".device-carry/tests/test_kernels_gpu", grid),
                             ("reports/baselines/torch_sdpa_bench.py", torch)), ("cudnn_table.py", "row_block_model.py"))
            out, argf = os.path.join(d, "out"), os.path.join(d, "args.txt")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "vs-cudnn"], cwd=d,
                               env=dict(os.environ, OUT=out, STANDIN_ARGS=argf, REAL_ROOT=ROOT,
                                        FLASHPROBE_CUDNN_VARIANTS="wgmma/good=1 wgmma/bad=1"),
                               capture_output=True, text=True, timeout=120)
            self.assertIn("grid wgmma/good=1: rc=0", p.stdout)
            self.assertIn("grid wgmma/bad=1: rc=1", p.stdout)
            self.assertIn("vs-cudnn: wgmma/bad=1 failed a check: not timed", p.stdout)
            self.assertIn("vs-cudnn table: rc=0", p.stdout)
            with open(argf) as f:
                lines = f.read().splitlines()
            bench = next(l for l in lines if l.startswith("bench ")).split()
            self.assertEqual(flag_values(bench, "--kernel"), ["mma", "wgmma", "wgmma/good=1"])
            self.assertEqual(flag_values(bench, "--group"), ["prefill", "whisper"])
            torch_args = next(l for l in lines if l.startswith("torch ")).split()
            self.assertIn("cudnn", torch_args)
            # the variant's checks ran before the bench
            self.assertLess(lines.index(next(l for l in lines if "wgmma_good" in l)), lines.index(" ".join(bench)))
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                t.extractall(d)
            with open(os.path.join(d, "results", "vs-cudnn.json")) as f:
                rec = json.load(f)
            self.assertEqual(rec["columns"]["wgmma/good=1"]["cases"], 52)
            self.assertAlmostEqual(rec["columns"]["dispatched"]["geomean"], 0.8)
            self.assertTrue(os.path.exists(os.path.join(d, "results", "vs-cudnn.md")))
            # the fixed-cost model per timed kernel, the variant's included
            self.assertIn("row-block model wgmma/good=1: rc=0", p.stdout)
            with open(os.path.join(d, "results", "row-block-model-wgmma_good_1.json")) as f:
                fits = json.load(f)["fits"]
            self.assertEqual(len(fits), 8)  # d 64/128 x causal or not x f16/bf16

    def test_headdim_stage_checks_variants_before_timing_the_headdim_group(self):
        """The headdim stage: mma and each variant that passed its grid and its gate are timed over
        bench's headdim group in one bench call (bf16 by default), then tabled."""
        fake = """#!/usr/bin/env bash
case $1 in
  --version) echo "flashprobe 0.1.0 (commit abc1234, backend cuda)" ;;
  gate) echo "gate $*" >> "$STANDIN_ARGS"
        ok=1; case "$*" in *mma/gatefails*) ok=0 ;; esac
        while (($#)); do case $1 in --junit) echo '<testsuites/>' > "$2" ;; --json) echo '{}' > "$2" ;; esac; shift; done
        if ((ok)); then echo "gate: 1 subject x property: 1 run, 0 failed -> PASSED"; else echo "gate: 1 failed -> FAILED"; exit 1; fi ;;
  bench) echo "bench $*" >> "$STANDIN_ARGS"
         ks=(); while (($#)); do case $1 in --kernel) ks+=("$2") ;; --json) js=$2 ;; esac; shift; done
         python3 - "$js" "${ks[@]}" <<'PY'
import json, sys
res = [{"impl": "flashprobe", "kernel": k, "group": "headdim", "case": "headdim:b4_h16_sq4096_d%d_bf16" % d, "median_ms": 1.0,
        "tflops": 100.0 + d, "timing": "graph"} for d in (136, 160) for k in sys.argv[2:]]
json.dump({"commit": "abc1234", "results": res}, open(sys.argv[1], "w"))
PY
         ;;
esac
"""
        grid = """#!/usr/bin/env bash
echo "grid $*" >> "$STANDIN_ARGS"
case "$*" in *gridfails*) echo '[  FAILED  ] 1 test, listed below:'; exit 1 ;; *) echo '[  PASSED  ] 1 test.' ;; esac
"""
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/flashprobe", fake), (".device-carry/tests/test_kernels_gpu", grid)), ("bench_table.py",))
            out, argf = os.path.join(d, "out"), os.path.join(d, "args.txt")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "headdim"], cwd=d,
                               env=dict(os.environ, OUT=out, STANDIN_ARGS=argf,
                                        FLASHPROBE_HEADDIM_VARIANTS="mma/classes=coarse mma/gridfails=1 mma/gatefails=1 wgmma"),
                               capture_output=True, text=True, timeout=120)
            self.assertIn("grid mma/classes=coarse: rc=0", p.stdout)
            self.assertIn("grid mma/gridfails=1: rc=1", p.stdout)
            self.assertIn("gate mma/gatefails=1: rc=1", p.stdout)
            self.assertIn("headdim: mma/gridfails=1 failed a check: not timed", p.stdout)
            self.assertIn("headdim: mma/gatefails=1 failed a check: not timed", p.stdout)
            self.assertIn("headdim table: rc=0", p.stdout)
            with open(argf) as f:
                lines = f.read().splitlines()
            bench = next(l for l in lines if l.startswith("bench ")).split()
            self.assertEqual(flag_values(bench, "--kernel"), ["mma", "mma/classes=coarse", "wgmma"])
            # a variant's grid test is Variants/..., a kernel's own (wgmma, timed against mma) Kernels/...
            grids = [l for l in lines if l.startswith("grid ")]
            self.assertIn("grid --gtest_filter=Variants/KernelGrid.AgreesWithOracleOnEveryCase/mma_classes_coarse", grids)
            self.assertIn("grid --gtest_filter=Kernels/KernelGrid.AgreesWithOracleOnEveryCase/wgmma", grids)
            self.assertEqual(bench[bench.index("--group") + 1], "headdim")
            self.assertEqual(bench[bench.index("--dtype") + 1], "bf16")
            gate = next(l for l in lines if l.startswith("gate ") and "classes=coarse" in l).split()
            self.assertEqual(gate[gate.index("--time-budget") + 1], "40")
            # the variant's checks ran before the bench
            self.assertLess(lines.index(next(l for l in lines if "mma_classes_coarse" in l)), lines.index(" ".join(bench)))
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                names = t.getnames()
            self.assertIn("results/bench-headdim.json", names)
            self.assertIn("results/headdim-table.txt", names)
            self.assertNotIn("--max-head-dim", bench)
            # FLASHPROBE_HEADDIM_MAX_D: only the head dims up to it (bench --max-head-dim)
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "headdim"], cwd=d,
                               env=dict(os.environ, OUT=out + "2", STANDIN_ARGS=argf, FLASHPROBE_HEADDIM_VARIANTS="mma/small=fma",
                                        FLASHPROBE_HEADDIM_MAX_D="64"),
                               capture_output=True, text=True, timeout=120)
            with open(argf) as f:
                bench = [l for l in f.read().splitlines() if l.startswith("bench ")][-1].split()
            self.assertEqual(flag_values(bench, "--kernel"), ["mma", "mma/small=fma"])
            self.assertEqual(bench[bench.index("--max-head-dim") + 1], "64")
            # FLASHPROBE_HEADDIM_KERNELS: production kernels timed in the same call, without grid or gate
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "headdim"], cwd=d,
                               env=dict(os.environ, OUT=out + "3", STANDIN_ARGS=argf, FLASHPROBE_HEADDIM_VARIANTS="mma/small=occ",
                                        FLASHPROBE_HEADDIM_KERNELS="wgmma", FLASHPROBE_HEADDIM_MAX_D="64"),
                               capture_output=True, text=True, timeout=120)
            with open(argf) as f:
                lines = f.read().splitlines()
            bench = [l for l in lines if l.startswith("bench ")][-1].split()
            self.assertEqual(flag_values(bench, "--kernel"), ["mma", "wgmma", "mma/small=occ"])
            checked = lines[lines.index([l for l in lines if l.startswith("bench ")][-2]) + 1:]
            self.assertFalse([l for l in checked if l.startswith(("grid ", "gate ")) and "wgmma" in l], checked)
            self.assertTrue([l for l in checked if l.startswith("grid ") and "mma_small_occ" in l], checked)

    def test_torch_props_stage_runs_pytest_the_subjects_and_the_crash_replay_together(self):
        """The torch-props stage with a stand-in python3: the wheel installed, the package's pytest, the
        subjects (--jobs 12 by default, FLASHPROBE_TORCH_PROPS_ARGS after it) and the replay of the recorded
        Flex crash all started, at the same time (each stand-in waits until all three have started), and
        each one's exit code and closing lines said."""
        fake = """#!/usr/bin/env bash
echo "$*" >> "$STANDIN_ARGS"
case "$*" in
  *"-m pip install"*) exit 0 ;;
esac
n=0  # the three long runs wait for one another: the stage must start them side by side
until [ "$(grep -c -E 'pytest|torch_props.py' "$STANDIN_ARGS")" -ge 3 ]; do
  sleep 0.1; n=$((n + 1)); [ $n -lt 100 ] || { echo "started one after another"; exit 3; }
done
case "$*" in
  *"-m pytest"*) echo "7 passed in 1.00s" ;;
  *--replay*) echo "replay flex-exact on b1_x: passed: ok" ;;
  *torch_props.py*) echo "sdpa-cudnn      f16   main       checked  1000"; echo '{"runs": 1, "cases_checked": 1000}'; exit 1 ;;
esac
"""
        with tempfile.TemporaryDirectory() as d:
            bin_dir, whl = os.path.join(d, "bin"), os.path.join(d, ".whl")
            os.makedirs(bin_dir)
            os.makedirs(whl)
            open(os.path.join(whl, "flashprobe-0.1.0-cp312-abi3-linux_x86_64.whl"), "w").close()
            with open(os.path.join(bin_dir, "python3"), "w") as f:
                f.write(fake)
            os.chmod(os.path.join(bin_dir, "python3"), 0o755)
            out, argf = os.path.join(d, "out"), os.path.join(d, "args.txt")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "torch-props"], cwd=d,
                               env=dict(os.environ, OUT=out, STANDIN_ARGS=argf, PATH=bin_dir + ":" + os.environ["PATH"],
                                        FLASHPROBE_TORCH_PROPS_ARGS="--cases 5"),
                               capture_output=True, text=True, timeout=120)
            self.assertIn("torch-props: rc=1", p.stdout)  # the subjects' exit code, said
            self.assertIn("sdpa-cudnn      f16   main       checked  1000", p.stdout)
            self.assertIn("torch-props replay: rc=0", p.stdout)
            self.assertIn("replay flex-exact on b1_x: passed", p.stdout)
            self.assertIn("torch-props pytest: rc=0 7 passed in 1.00s", p.stdout)
            with open(argf) as f:
                lines = f.read().splitlines()
            main = next(l for l in lines if "torch_props.py" in l and "--replay" not in l).split()
            self.assertEqual(main[main.index("--jobs") + 1], "12")
            self.assertLess(main.index("--jobs"), main.index("--cases"))  # the caller's arguments win
            self.assertTrue(main[main.index("--out") + 1].endswith("/torch-props"))
            replay = next(l for l in lines if "--replay" in l).split()
            self.assertTrue(replay[replay.index("--replay") + 1].endswith("flex_crash_083d889.json"))
            self.assertIn("flex-exact,flex", replay)
            # Another case and other subjects for the replay (the record's follow-up questions).
            os.remove(argf)
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "torch-props"], cwd=d,
                               env=dict(os.environ, OUT=out, STANDIN_ARGS=argf, PATH=bin_dir + ":" + os.environ["PATH"],
                                        FLASHPROBE_TORCH_PROPS_REPLAY="case.json",
                                        FLASHPROBE_TORCH_PROPS_REPLAY_SUBJECTS="sdpa-efficient,sdpa-cudnn"),
                               capture_output=True, text=True, timeout=120)
            self.assertIn("torch-props replay: rc=0", p.stdout)
            with open(argf) as f:
                replay = next(l for l in f.read().splitlines() if "--replay" in l).split()
            self.assertEqual(replay[replay.index("--replay") + 1], "case.json")
            self.assertEqual(replay[replay.index("--subjects") + 1], "sdpa-efficient,sdpa-cudnn")


    def test_soak_runs_the_arena_and_soak_per_case_the_per_case_runner(self):
        """The soak stage runs on the case arena, the soak's default; soak-per-case runs the same soak on
        the per-case runner into per-case/prop_soak.json, and the report counts each pair once (one subject)."""
        props = """#!/usr/bin/env bash
echo "runner ${FLASHPROBE_CASE_ARENA:-unset}" >> "$STANDIN_ARGS"
echo "cases x: $FLASHPROBE_PROP_CASES run, passed"
printf '{"schema":"flashprobe.prop_throughput/1","rows":[{"kernel":"k","cases":1,"seconds":1.0,"oracle_s":0.5,"runner":"%s"}]}' \
  "$([ "$FLASHPROBE_CASE_ARENA" = 1 ] && echo arena || echo per-case)" > "$FLASHPROBE_RECORD_DIR/prop_throughput.json"
"""
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/tests/test_kernel_props", props),), ("soak", "soak_summary.py", "mps.sh"))
            out, argf = os.path.join(d, "out"), os.path.join(d, "args.txt")
            env = dict(os.environ, OUT=out, STANDIN_ARGS=argf, FLASHPROBE_SOAK_SET="mma:f16", FLASHPROBE_SOAK_CASES="4",
                       FLASHPROBE_SOAK_JOBS="2", FLASHPROBE_MPS_CONTROL=os.path.join(d, "none"))
            env.pop("FLASHPROBE_CASE_ARENA", None)
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "soak", "soak-per-case"], cwd=d,
                               env=env, capture_output=True, text=True, timeout=120)
            self.assertIn("soak: rc=0", p.stdout)
            self.assertIn("soak-per-case: rc=0", p.stdout)
            with open(argf) as f:
                self.assertEqual(f.read().split("\n")[:-1], ["runner 1"] * 2 + ["runner 0"] * 2)
            res = os.path.join(d, "res", "h100", "run")
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                t.extractall(res)
            recs = records.load([os.path.join(d, "res")])
            by_path = {r.path.split("/results/")[1]: r.data for r in recs.of("prop_soak")}
            self.assertEqual(by_path["prop_soak.json"]["runner"], "arena")
            self.assertEqual(by_path["per-case/prop_soak.json"]["runner"], "per-case")
            self.assertEqual({i.subject for r in recs.of("prop_soak") for i in checks.items_of(r)}, {"mma f16 AgreesWithOracle"})

    def test_soak_stage_soaks_a_variant_named_in_the_soak_set(self):
        """FLASHPROBE_SOAK_SET may name a variant (mma/classes=coarse): each shard runs test_kernel_props with
        FLASHPROBE_PROP_VARIANTS naming it and the variant's test (Variants/KernelProps), and the record's
        subject is the variant, not mma: a soak that dropped the name would have soaked mma instead."""
        props = """#!/usr/bin/env bash
echo "variants=${FLASHPROBE_PROP_VARIANTS-unset} $*" >> "$STANDIN_ARGS"
case "$*" in
  *--gtest_filter=Variants/KernelProps.Holds/mma_classes_coarse_AgreesWithOracle*)
    [ "$FLASHPROBE_PROP_VARIANTS" = mma/classes=coarse ] || { echo "no such test"; exit 0; }
    echo "cases mma/classes=coarse/AgreesWithOracle: $FLASHPROBE_PROP_CASES run, passed" ;;
  *) echo "[  PASSED  ] 0 tests." ;;
esac
printf '{"schema":"flashprobe.prop_throughput/1","rows":[{"kernel":"mma/classes=coarse","cases":1,"seconds":1.0,"runner":"arena"}]}' \
  > "$FLASHPROBE_RECORD_DIR/prop_throughput.json"
"""
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/tests/test_kernel_props", props),), ("soak", "soak_summary.py", "mps.sh"))
            out, argf = os.path.join(d, "out"), os.path.join(d, "args.txt")
            env = dict(os.environ, OUT=out, STANDIN_ARGS=argf, FLASHPROBE_SOAK_SET="mma/classes=coarse:f16,bf16",
                       FLASHPROBE_SOAK_CASES="4", FLASHPROBE_SOAK_JOBS="2", FLASHPROBE_MPS_CONTROL=os.path.join(d, "none"))
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "soak"], cwd=d,
                               env=env, capture_output=True, text=True, timeout=120)
            self.assertIn("soak: rc=0", p.stdout, p.stdout + p.stderr)
            self.assertIn("soak mma/classes=coarse/f16/AgreesWithOracle: run 4 cases", p.stdout)
            self.assertIn("soak mma/classes=coarse/bf16/AgreesWithOracle: run 4 cases", p.stdout)
            with open(argf) as f:
                calls = f.read().splitlines()
            self.assertEqual(len(calls), 4)  # 2 dtypes x 2 shards
            for c in calls:
                self.assertTrue(c.startswith("variants=mma/classes=coarse --gtest_filter=Variants/KernelProps.Holds/"
                                             "mma_classes_coarse_AgreesWithOracle"), c)
            res = os.path.join(d, "res", "h100", "run")
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                t.extractall(res)
                self.assertIn("results/soak/mma_classes_coarse-f16-0/log.txt", t.getnames())
            recs = records.load([os.path.join(d, "res")])
            self.assertEqual({i.subject for r in recs.of("prop_soak") for i in checks.items_of(r)},
                             {"mma/classes=coarse f16 AgreesWithOracle", "mma/classes=coarse bf16 AgreesWithOracle"})

    def test_soak_of_a_variant_the_binary_does_not_register_fails(self):
        """A variant the props binary does not know (an older carry: the filter matches no test) runs no
        case: the soak fails, never a pass."""
        props = "#!/usr/bin/env bash\necho '[==========] 0 tests from 0 test suites ran.'\necho '[  PASSED  ] 0 tests.'\n"
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/tests/test_kernel_props", props),), ("soak", "soak_summary.py", "mps.sh"))
            env = dict(os.environ, OUT=os.path.join(d, "out"), FLASHPROBE_SOAK_SET="mma/classes=coarse:f16",
                       FLASHPROBE_SOAK_CASES="4", FLASHPROBE_SOAK_JOBS="2", FLASHPROBE_MPS_CONTROL=os.path.join(d, "none"))
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "soak"], cwd=d,
                               env=env, capture_output=True, text=True, timeout=120)
            self.assertIn("soak: rc=1", p.stdout)
            self.assertIn("soak mma/classes=coarse/f16/AgreesWithOracle: run 0 cases", p.stdout)

    def test_sanitize_stage_runs_the_named_variants_under_every_tool(self):
        """FLASHPROBE_SANITIZE_VARIANTS reaches test_kernels_sanitize, whose SanitizeVariants test runs
        under memcheck, racecheck and synccheck beside the production kernels; a tool's run in which the
        variants' test did not pass (here: skipped, as when the name is dropped) is a failure."""
        sanitize = """#!/usr/bin/env bash
echo "variants=${FLASHPROBE_SANITIZE_VARIANTS-unset} $*" >> "$STANDIN_ARGS"
case "$*" in
  *SanitizeMutant*) echo "========= RACECHECK SUMMARY: 1 hazard displayed"; exit 1 ;;
esac
echo "[       OK ] Sanitize.ProductionKernelsOnRepresentativeProblems (10 ms)"
case "$*" in
  *SanitizeVariants*)
    if [ -n "$FLASHPROBE_SANITIZE_VARIANTS" ]; then
      echo "sanitized variant $FLASHPROBE_SANITIZE_VARIANTS: 9 problems"
      echo "[       OK ] SanitizeVariants.NamedVariantsOnRepresentativeProblems (10 ms)"
    else echo "[  SKIPPED ] SanitizeVariants.NamedVariantsOnRepresentativeProblems (0 ms)"; fi ;;
esac
"""
        # compute-sanitizer --tool T --error-exitcode 1 BINARY ARGS...: runs the binary with its arguments,
        # then its summary line (racecheck's is its own: no ERROR SUMMARY).
        tool = """#!/usr/bin/env bash
t=$2; shift 4; "$@"; rc=$?
case "$*" in *SanitizeMutant*) exit $rc ;; esac
if [ "$t" = racecheck ]; then echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
else echo "========= ERROR SUMMARY: 0 errors"; fi
exit $rc
"""
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/tests/test_kernels_sanitize", sanitize), ("bin/compute-sanitizer", tool)))
            argf = os.path.join(d, "args.txt")
            env = dict(os.environ, OUT=os.path.join(d, "out"), STANDIN_ARGS=argf,
                       PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"])
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "sanitize"], cwd=d,
                               env=dict(env, FLASHPROBE_SANITIZE_VARIANTS="mma/classes=coarse"),
                               capture_output=True, text=True, timeout=120)
            for t in ("memcheck", "racecheck", "synccheck"):
                self.assertIn(f"sanitize {t} (production kernels and mma/classes=coarse, expect clean): rc=0", p.stdout)
            # each tool's own summary line, racecheck's too
            self.assertIn("sanitize racecheck (production kernels and mma/classes=coarse, expect clean): rc=0 "
                          "========= RACECHECK SUMMARY: 0 hazards displayed", p.stdout)
            self.assertIn("sanitize memcheck (production kernels and mma/classes=coarse, expect clean): rc=0 "
                          "========= ERROR SUMMARY: 0 errors", p.stdout)
            self.assertEqual(p.stdout.count("sanitized variant mma/classes=coarse: 9 problems"), 3)
            self.assertIn("rc=1 KILLED", p.stdout)
            with open(argf) as f:
                calls = f.read().splitlines()
            self.assertEqual(sum(c.startswith("variants=mma/classes=coarse --gtest_filter=Sanitize.*:SanitizeVariants.*")
                                 for c in calls), 3)
            # Without variants: the production kernels only, as before.
            os.remove(argf)
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "sanitize"], cwd=d,
                               env=env, capture_output=True, text=True, timeout=120)
            self.assertIn("sanitize memcheck (production kernels, expect clean): rc=0", p.stdout)
            with open(argf) as f:
                self.assertIn("variants= --gtest_filter=Sanitize.*", f.read().splitlines())
            # A variants' test that does not pass (the stand-in skips it, as the binary does when the
            # name did not reach it) fails the tool's line.
            bad = sanitize.replace('if [ -n "$FLASHPROBE_SANITIZE_VARIANTS" ]', "if false")
            standin_tree(os.path.join(d, "b"), ((".device-carry/tests/test_kernels_sanitize", bad),))
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "sanitize"], cwd=os.path.join(d, "b"),
                               env=dict(env, FLASHPROBE_SANITIZE_VARIANTS="mma/classes=coarse"),
                               capture_output=True, text=True, timeout=120)
            self.assertIn("sanitize memcheck: the variants' test did not pass", p.stdout)
            self.assertIn("sanitize memcheck (production kernels and mma/classes=coarse, expect clean): rc=1", p.stdout)

    def test_profile_stage_profiles_one_backward_call_of_each_kernel(self):
        """FLASHPROBE_PROFILE_BACKWARD=1: Nsight Compute (a stand-in that records its arguments and runs the
        profiled command) over one backward call: flashprobe's kernels through `bench --backward --timing
        launch` (every *bwd* launch of the call), PyTorch's flash and cuDNN backward through the real
        torch_sdpa_bench.py --backward (its arguments parse; torch itself is absent or finds no GPU here).
        Without it the forward command lines are as before: `run --kernel K`, regex K_fwd, one launch."""
        ncu = """#!/usr/bin/env bash
if [ "$1" = -i ]; then printf '  %s (1, 1, 1)x(256, 1, 1)\n    Duration  usecond  7.0\n' "$STANDIN_NAME"; exit 0; fi
echo "ncu $*" >> "$STANDIN_ARGS"
while (($#)) && [ "$1" != -o ]; do shift; done
shift 2
"$@"
"""
        fake = """#!/usr/bin/env bash
case $1 in
  --version) echo "flashprobe 0.1.0 (commit abc1234, backend cuda)" ;;
  *) echo "flashprobe $*" >> "$STANDIN_ARGS" ;;
esac
"""
        problem = '{"batch": 4, "hq": 16, "hkv": 16, "sq": 4096, "sk": 4096, "d": 128, "dtype": "bf16", "causal": "none"}\n'
        with tempfile.TemporaryDirectory() as d:
            standin_tree(d, ((".device-carry/flashprobe", fake), ("bin/ncu", ncu)))
            os.makedirs(os.path.join(d, "reports", "baselines"))
            os.symlink(os.path.join(ROOT, "reports", "baselines", "torch_sdpa_bench.py"),
                       os.path.join(d, "reports", "baselines", "torch_sdpa_bench.py"))
            pj = os.path.join(d, "d128.json")
            with open(pj, "w") as f:
                f.write(problem)
            argf = os.path.join(d, "args.txt")
            env = dict(os.environ, OUT=os.path.join(d, "out"), STANDIN_ARGS=argf, STANDIN_NAME="mma_bwd_fa2_dkdv",
                       PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"], FLASHPROBE_PROFILE_CASES=pj,
                       FLASHPROBE_PROFILE_KERNELS="mma_bwd_fa2 torch-flash torch-cudnn")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "profile"], cwd=d,
                               env=dict(env, FLASHPROBE_PROFILE_BACKWARD="1"), capture_output=True, text=True, timeout=120)
            for c in ("mma_bwd_fa2-bwd-d128", "torch-flash-bwd-d128", "torch-cudnn-bwd-d128"):
                self.assertIn(f"profile {c}: rc=", p.stdout)
            self.assertIn("  mma_bwd_fa2_dkdv (1, 1, 1)x(256, 1, 1)", p.stdout)
            with open(argf) as f:
                lines = f.read().splitlines()
            ncus = [l.split() for l in lines if l.startswith("ncu ")]
            self.assertEqual(len(ncus), 3)
            self.assertEqual([a[a.index("--kernel-name") + 1] for a in ncus],
                             ["regex:bwd", "regex:flash_bwd", "regex:cudnn|bprop|fmha"])
            self.assertEqual([a[a.index("--launch-count") + 1] for a in ncus], ["4", "4", "4"])
            # ours: one backward call of the named kernel on the problem, launch timing (no graph)
            fp = next(l for l in lines if l.startswith("flashprobe ")).split()[1:]
            self.assertEqual(fp[:3], ["bench", "--backward", "--timing"])
            self.assertEqual(flag_values(fp, "--timing"), ["launch"])
            self.assertEqual(flag_values(fp, "--kernel"), ["mma_bwd_fa2"])
            self.assertEqual(flag_values(fp, "--problem"), [pj])
            # PyTorch's: --backward with one backend; the real script parsed the line and read the problem
            for a, backend in zip(ncus[1:], ("flash", "cudnn")):
                cmd = a[a.index("-o") + 2:]
                self.assertEqual(cmd[:2], ["python3", "reports/baselines/torch_sdpa_bench.py"])
                self.assertIn("--backward", cmd)
                self.assertEqual(flag_values(cmd, "--backends"), [backend])
                self.assertEqual(flag_values(cmd, "--problem"), [pj])
            with tarfile.open(os.path.join(d, "out", "results.tgz")) as t:
                t.extractall(os.path.join(d, "res"))
            for backend in ("flash", "cudnn"):
                with open(os.path.join(d, "res", "results", f"log-ncu-torch-{backend}-bwd-d128.txt")) as f:
                    log = f.read()
                self.assertNotIn("usage:", log)
                self.assertNotIn("torch_sdpa_bench: --problem", log)
                self.assertTrue("No module named 'torch'" in log or "no CUDA device" in log, log)
            self.assertTrue(os.path.exists(os.path.join(d, "res", "results", "ncu-mma_bwd_fa2-bwd-d128.txt")))
            # The forward, as before.
            os.remove(argf)
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "profile"], cwd=d,
                               env=dict(env, FLASHPROBE_PROFILE_KERNELS="mma torch-flash"), capture_output=True, text=True,
                               timeout=120)
            self.assertIn("profile mma-d128: rc=", p.stdout)
            with open(argf) as f:
                lines = f.read().splitlines()
            ncus = [l.split() for l in lines if l.startswith("ncu ")]
            self.assertEqual([a[a.index("--kernel-name") + 1] for a in ncus], ["regex:mma_fwd", "regex:flash_fwd"])
            self.assertEqual([a[a.index("--launch-count") + 1] for a in ncus], ["1", "1"])
            fp = next(l for l in lines if l.startswith("flashprobe ")).split()[1:]
            self.assertEqual(fp[:5], ["run", "--kernel", "mma", "--problem", pj])
            self.assertNotIn("--backward", ncus[1])


if __name__ == "__main__":
    unittest.main()
