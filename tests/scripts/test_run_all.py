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


if __name__ == "__main__":
    unittest.main()
