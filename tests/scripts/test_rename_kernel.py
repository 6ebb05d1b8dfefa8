#!/usr/bin/env python3
"""scripts/gpu/rename_kernel.py: one kernel renamed, or every kernel with '*' (the baseline stage)."""
import json, os, subprocess, sys, tempfile, unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu", "rename_kernel.py")


class Rename(unittest.TestCase):
    def run_on(self, kernels, *args):
        path = os.path.join(tempfile.mkdtemp(), "b.json")
        with open(path, "w") as f:
            json.dump({"results": [{"kernel": k, "case": "c"} for k in kernels] + [{"impl": "torch-flash"}]}, f)
        r = subprocess.run([sys.executable, SCRIPT, path, *args], capture_output=True, text=True)
        with open(path) as f:
            return r.returncode, [x.get("kernel") for x in json.load(f)["results"]]

    def test_one(self):
        self.assertEqual(self.run_on(["mma", "wgmma"], "wgmma", "wgmma-pingpong"), (0, ["mma", "wgmma-pingpong", None]))

    def test_every_kernel(self):
        self.assertEqual(self.run_on(["mma", "decode"], "*", "*-baseline"), (0, ["mma-baseline", "decode-baseline", None]))

    def test_usage(self):
        self.assertEqual(self.run_on(["mma"], "mma")[0], 2)


if __name__ == "__main__":
    unittest.main()
