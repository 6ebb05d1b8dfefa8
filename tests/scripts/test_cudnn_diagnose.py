#!/usr/bin/env python3
"""scripts/gpu/cudnn_diagnose.py (run-all's cudnn-diagnose stage) on the cuDNN plug-in with the
stand-in cuDNN of tests/plugin/fake_cudnn.cpp: every fixed problem gets a plan and the old f32-P graph
none (exit 0); a refused plan names its step and status (exit 1); no cuDNN (exit 1) and bad input
(exit 2) say what happened.

    test_cudnn_diagnose.py <libfp_cudnn_sdpa.so> <libfp_fake_cudnn.so>"""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu", "cudnn_diagnose.py")
PLUGIN = FAKE = None


def run(*args, **env):
    e = dict(os.environ)
    e.pop("FAKE_CUDNN_PLAN_STATUS", None)
    e.update(env)
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=e, timeout=120)
    return p.returncode, p.stdout + p.stderr


class CudnnDiagnose(unittest.TestCase):
    def test_every_fixed_problem_gets_a_plan_and_the_f32_p_graph_none(self):
        rc, out = run(PLUGIN, FLASHPROBE_CUDNN_LIB=FAKE)
        self.assertEqual(rc, 0, out)
        self.assertIn("version 91900", out)
        # No mask: the unified operation; causal: the composite graph; then the composite graph alone.
        self.assertEqual(out.count("=> PLAN from unified SDPA operation, heuristics A, configuration 0"), 4, out)
        self.assertRegex(out, r"finalize execution plan from heuristics A, configuration 0: CUDNN_STATUS_SUCCESS \(0\) \(\d+ ms\)")
        self.assertEqual(out.count("=> PLAN from composite graph, heuristics A, configuration 0"), 4, out)
        self.assertIn("finalize tensor P uid 107 f32 [2,4,128,128]", out)
        self.assertIn(", composite graph only, P in f32\n", out)
        self.assertIn("=> NO PLAN: cuDNN 91900 has no engine for this graph: composite graph: heuristics A: 0, heuristics FALLBACK: 0, "
                      "engines taking the graph: 0 of 2 (2 CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN (3001))", out)
        self.assertIn("7 of 7 fixed problems got a plan", out)

    def test_a_refused_plan_names_its_step_and_status(self):
        rc, out = run(PLUGIN, FLASHPROBE_CUDNN_LIB=FAKE, FAKE_CUDNN_PLAN_STATUS="3000")
        self.assertEqual(rc, 1, out)
        self.assertIn("finalize execution plan from heuristics A, configuration 0: CUDNN_STATUS_NOT_SUPPORTED (3000) "
                      "(fake cuDNN: plan refused)", out)
        self.assertIn("0 of 7 fixed problems got a plan", out)

    def test_without_cudnn_it_says_so(self):
        rc, out = run(PLUGIN, FLASHPROBE_CUDNN_LIB="/nonexistent/libcudnn.so.9")
        self.assertEqual(rc, 1, out)
        self.assertIn('cuDNN not found: dlopen("/nonexistent/libcudnn.so.9") failed', out)

    def test_bad_input(self):
        self.assertEqual(run()[0], 2)
        rc, out = run("/nonexistent/libfp_cudnn_sdpa.so")
        self.assertEqual(rc, 2, out)
        self.assertIn("/nonexistent/libfp_cudnn_sdpa.so: no such file", out)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_cudnn_diagnose.py <libfp_cudnn_sdpa.so> <libfp_fake_cudnn.so>")
    PLUGIN, FAKE = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1])
