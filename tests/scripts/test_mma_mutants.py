#!/usr/bin/env python3
"""The mma kernel's source mutants (scripts/gpu/mma-*-mutants, built by scripts/gpu/mma-mutants on a
CUDA tree) checked without building: every wrapper's specs still apply to kernels/src/mma/mma_attn.cuh
(each FROM once, TO different), so that a kernel edit that moves a mutated line shows here and not
first on the GPU machine; and the check itself refuses what it must."""
import glob
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MUTANTS = os.path.join(ROOT, "scripts", "gpu", "mma-mutants")


def check(*args):
    return subprocess.run(list(args), cwd=ROOT, env=dict(os.environ, FLASHPROBE_MUTANTS_CHECK="1"),
                          capture_output=True, text=True, timeout=60)


class MmaMutantsTests(unittest.TestCase):
    def test_every_wrappers_mutants_apply_to_the_kernel_source(self):
        wrappers = sorted(glob.glob(os.path.join(ROOT, "scripts", "gpu", "mma-*-mutants")))
        names = {os.path.basename(w) for w in wrappers}
        self.assertTrue({"mma-rescale-mutants", "mma-skip-mutants", "mma-tail-mutants"} <= names, names)
        for w in wrappers:
            p = check(w)
            self.assertEqual(p.returncode, 0, w + ": " + p.stdout + p.stderr)
            self.assertGreaterEqual(p.stdout.count(" applies"), 2, w + ": " + p.stdout)

    def test_the_tail_mutants_reach_the_fine_ladders_code(self):
        """mma-tail-mutants mutates the head-dim tail (kTail) code that the fine ladder's 160 and 192
        classes run: its three mutants apply, one line each."""
        p = check(os.path.join(ROOT, "scripts", "gpu", "mma-tail-mutants"))
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("kstep-half", "otile-half", "store-past-dv"):
            self.assertIn(f"mma-mutants: {name} applies", p.stdout)

    def test_the_check_refuses_a_missing_line_a_no_op_and_a_malformed_spec(self):
        p = check(MUTANTS, "gone=this line is not in the kernel=>x")
        self.assertEqual(p.returncode, 1)
        self.assertIn("occurs 0 times", p.stderr)
        p = check(MUTANTS, "same=if (kTail && ot * N >= dvv) return;=>if (kTail && ot * N >= dvv) return;")
        self.assertEqual(p.returncode, 1)
        self.assertIn("changes nothing", p.stderr)
        p = check(MUTANTS, "nospec")
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
