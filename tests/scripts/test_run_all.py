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


if __name__ == "__main__":
    unittest.main()
