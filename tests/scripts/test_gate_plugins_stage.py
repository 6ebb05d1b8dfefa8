#!/usr/bin/env python3
"""run-all's gate-plugins stage and its verdict (scripts/gpu/gate_verdict.py) with a stand-in
`flashprobe gate`: a planted bug that passes the gate, one killed only as "not exercised", one
killed without a shrunk case and one whose library is missing all fail the stage; the control and
the project kernel must hold; a killed bug with a shrunk case is what the stage wants."""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERDICT = os.path.join(ROOT, "scripts", "gpu", "gate_verdict.py")
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
import gate_verdict  # noqa: E402

PASSED = """<?xml version="1.0"?><testsuites><testsuite name="s">
<testcase classname="s" name="AgreesWithOracle"/><testcase classname="s" name="Deterministic"/></testsuite></testsuites>"""
KILLED = """<?xml version="1.0"?><testsuites><testsuite name="s">
<testcase classname="s" name="AgreesWithOracle"><failure type="failed" message="o differs">o differs
shrunk case:
{"sq": 1}
reproduce:
flashprobe gate --replay 'plugin=x property=AgreesWithOracle rc=abc'</failure></testcase>
<testcase classname="s" name="Deterministic"/></testsuite></testsuites>"""
NO_SHRINK = KILLED.replace("shrunk case:", "case:")
NOT_EXERCISED = """<?xml version="1.0"?><testsuites><testsuite name="s">
<testcase classname="s" name="WindowsAgreeWithOracle"><failure type="not_exercised" message="not exercised">refused</failure></testcase>
<testcase classname="s" name="AgreesWithOracle"/></testsuite></testsuites>"""
HARNESS_ERROR = """<?xml version="1.0"?><testsuites><testsuite name="s">
<testcase classname="s" name="LargeOffsetsAgree"><error type="device_memory" message="not exercised: device memory">short</error></testcase>
<testcase classname="s" name="AgreesWithOracle"/></testsuite></testsuites>"""

# The stand-in gate: the JUnit it writes and its exit code follow the plug-in's file name.
STAND_IN = """#!/usr/bin/env bash
so= junit= allow=
while (($#)); do case $1 in --plugin) so=$2; shift ;; --junit) junit=$2; shift ;; --allow-not-exercised) allow=$2; shift ;; esac; shift; done
case $so in
  *naive*) [ "$allow" = WindowsAgreeWithOracle ] || { cp "$STANDIN/not_exercised.xml" "$junit"; exit 1; }
           cp "$STANDIN/passed.xml" "$junit"; exit 0 ;;
  *bug_lse_log2*) cp "$STANDIN/killed.xml" "$junit"; exit 1 ;;
  *bug_lse_unwritten*) cp "$STANDIN/no_shrink.xml" "$junit"; exit 1 ;;
  *bug_scale_twice*) cp "$STANDIN/passed.xml" "$junit"; exit 0 ;;
  *bug_empty_row_nan*) cp "$STANDIN/not_exercised.xml" "$junit"; exit 1 ;;
  *cudnn*) [ "$allow" = WindowsAgreeWithOracle ] || { cp "$STANDIN/not_exercised.xml" "$junit"; exit 1; }
           echo "plug-in cannot be loaded" >&2; exit 2 ;;
  *) cp "$STANDIN/passed.xml" "$junit"; exit 0 ;;
esac
"""


class GatePluginsStage(unittest.TestCase):
    def test_stage_fails_every_bug_not_killed_with_a_shrunk_case(self):
        with tempfile.TemporaryDirectory() as d:
            carry = os.path.join(d, ".device-carry")
            plugins = os.path.join(carry, "plugins")
            standin = os.path.join(d, "standin")
            os.makedirs(plugins)
            os.makedirs(standin)
            for name, body in (("passed", PASSED), ("killed", KILLED), ("no_shrink", NO_SHRINK),
                               ("not_exercised", NOT_EXERCISED)):
                with open(os.path.join(standin, name + ".xml"), "w") as f:
                    f.write(body)
            with open(os.path.join(carry, "flashprobe"), "w") as f:
                f.write(STAND_IN)
            os.chmod(os.path.join(carry, "flashprobe"), 0o755)
            bugs = ["none", "lse_log2", "lse_unwritten", "scale_twice", "empty_row_nan", "gqa_head_map"]
            with open(os.path.join(plugins, "planted_bugs.txt"), "w") as f:
                f.write("\n".join(bugs) + "\n")
            for lib in ["libfp_naive_plugin.so", "libfp_project_kernel.so", "libfp_cudnn_sdpa.so"] + \
                       [f"libfp_bug_{b}.so" for b in bugs if b != "gqa_head_map"]:  # gqa_head_map: not carried
                open(os.path.join(plugins, lib), "w").close()
            out = os.path.join(d, "out")
            p = subprocess.run([os.path.join(ROOT, "scripts", "gpu", "run-all"), "gate-plugins"], cwd=d,
                               env=dict(os.environ, OUT=out, STANDIN=standin,
                                        FLASHPROBE_CUDNN_LIB="/nowhere/libcudnn.so.9"),
                               capture_output=True, text=True, timeout=120)
            lines = p.stdout
            self.assertIn("example: held", lines)
            self.assertIn("project-tiled: held", lines)
            self.assertIn("project-mma: held", lines)
            self.assertIn("bug-none: held", lines)
            self.assertIn("bug-lse_log2: KILLED", lines)
            self.assertIn("bug-lse_unwritten: NOT KILLED, failed without a shrunk case", lines)
            self.assertIn("bug-scale_twice: SURVIVED", lines)
            self.assertIn("bug-empty_row_nan: NOT KILLED, failed only as not exercised", lines)
            self.assertIn("bug-gqa_head_map: FAILED, its library was not built or not carried", lines)
            self.assertIn("cudnn: FAILED", lines)
            self.assertIn("gate-plugins: 10 subjects, 5 as expected, 5 not", lines)
            self.assertIn("gate-plugins: rc=1", lines)
            with tarfile.open(os.path.join(out, "results.tgz")) as t:
                rec = json.load(t.extractfile("results/gate-plugins.json"))
            self.assertEqual(rec["schema"], "flashprobe.gpu_run/1")
            failed = {r["subject"] for r in rec["summary"] if r["failed"]}
            self.assertEqual(failed, {"bug-lse_unwritten", "bug-scale_twice", "bug-empty_row_nan",
                                      "bug-gqa_head_map", "cudnn"})

    def test_expectations(self):
        with tempfile.TemporaryDirectory() as d:
            def junit(body):
                path = os.path.join(d, f"{len(os.listdir(d))}.xml")
                with open(path, "w") as f:
                    f.write(body)
                return path
            self.assertTrue(gate_verdict.judge("a", "pass", 0, junit(PASSED))[0])
            self.assertFalse(gate_verdict.judge("a", "pass", 1, junit(KILLED))[0])
            self.assertFalse(gate_verdict.judge("a", "pass", 0, junit("<testsuites/>"))[0])  # nothing ran
            self.assertFalse(gate_verdict.judge("a", "pass", 0, os.path.join(d, "absent.xml"))[0])
            self.assertTrue(gate_verdict.judge("a", "killed", 1, junit(KILLED))[0])
            self.assertFalse(gate_verdict.judge("a", "killed", 2, junit(KILLED))[0])  # bad usage is no kill
            self.assertTrue(gate_verdict.judge("a", "any", 1, junit(KILLED))[0])
            self.assertFalse(gate_verdict.judge("a", "any", 1, junit(NOT_EXERCISED.replace(
                '<testcase classname="s" name="AgreesWithOracle"/>', "")))[0])  # nothing exercised
            self.assertFalse(gate_verdict.judge("a", "surely", 0, junit(PASSED))[0])
            # The harness short of device memory: no hold, no kill, and said so.
            ok, line = gate_verdict.judge("a", "pass", 1, junit(HARNESS_ERROR))
            self.assertFalse(ok)
            self.assertIn("not run, the harness's error: s.LargeOffsetsAgree (device_memory)", line)
            ok, line = gate_verdict.judge("a", "killed", 1, junit(HARNESS_ERROR))
            self.assertFalse(ok)
            self.assertIn("NOT KILLED, the harness could not run its failing properties", line)


if __name__ == "__main__":
    unittest.main()
