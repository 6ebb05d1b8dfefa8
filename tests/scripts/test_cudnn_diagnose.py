#!/usr/bin/env python3
"""scripts/gpu/cudnn_diagnose.py (run-all's cudnn-diagnose stage) on the cuDNN plug-in with the
stand-in cuDNN of tests/plugin/fake_cudnn.cpp: every fixed problem gets a plan and the old f32-P graph
none (exit 0); a refused plan names its step and status (exit 1); no cuDNN (exit 1) and bad input
(exit 2) say what happened; a crash inside cuDNN is said loudly with the step it had reached (exit 3);
the script's ctypes signatures are the header's (plugin/subjects/cudnn_sdpa_diagnose.h).

    test_cudnn_diagnose.py <libfp_cudnn_sdpa.so> <libfp_fake_cudnn.so>"""
import ctypes
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu", "cudnn_diagnose.py")
HEADER = os.path.join(ROOT, "plugin", "subjects", "cudnn_sdpa_diagnose.h")
sys.path.insert(0, os.path.dirname(SCRIPT))
import cudnn_diagnose  # noqa: E402
PLUGIN = FAKE = None


def run(*args, **env):
    e = dict(os.environ)
    e.pop("FAKE_CUDNN_PLAN_STATUS", None)
    e.pop("FAKE_CUDNN_CRASH", None)
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

    def test_a_crash_inside_cudnn_is_said_loudly_with_the_step_it_reached(self):
        rc, out = run(PLUGIN, FLASHPROBE_CUDNN_LIB=FAKE, FAKE_CUDNN_CRASH="heuristics")
        self.assertEqual(rc, 3, out)
        self.assertIn("the diagnostic CRASHED with SIGSEGV (11)", out)
        self.assertIn("Fatal Python error: Segmentation fault", out)  # faulthandler: the call it was in
        # Every step up to the crash is on the page (printed as it happened, not after the build).
        self.assertIn("finalize operation graph of the unified SDPA operation (1 operations): CUDNN_STATUS_SUCCESS (0)", out)
        self.assertLess(out.index("finalize operation graph of the unified SDPA operation"), out.index("CRASHED"))

    def test_no_library_it_loaded_is_unloaded(self):
        # The first diagnostic dlclose()d the cuDNN sub-libraries it had just loaded to test them: their
        # static constructors register engines with libcudnn_graph, which stays (the likeliest cause of
        # its crash on an H100). In one process: every library it says "loads from" is still mapped.
        probe = ("import ctypes, sys, re\n"
                 "sys.path.insert(0, sys.argv[3])\n"
                 "import cudnn_diagnose\n"
                 "cudnn_diagnose.bind(ctypes.CDLL(sys.argv[1]), 'fp_cudnn_sdpa_diagnose')()\n"
                 "sys.stdout.flush()\n"
                 "maps = open('/proc/self/maps').read()\n"
                 "print('MAPPED', ' '.join(sorted(set(re.findall(r'\\S+\\.so[\\.\\d]*$', maps, re.M)))))\n")
        e = dict(os.environ, FLASHPROBE_CUDNN_LIB=FAKE)
        p = subprocess.run([sys.executable, "-c", probe, PLUGIN, FAKE, os.path.dirname(SCRIPT)], capture_output=True, text=True,
                           env=e, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        loaded = re.findall(r"^  (lib\S+)\s+loads from (\S+)$", p.stdout, re.M)
        if not loaded:
            self.skipTest("no cuDNN sub-library or NVRTC loads on this machine: nothing to keep")
        mapped = p.stdout.rsplit("MAPPED ", 1)[1].split()
        for name, path in loaded:
            self.assertIn(os.path.realpath(path), [os.path.realpath(m) for m in mapped], f"{name} was unloaded")

    def test_the_scripts_ctypes_signatures_are_the_headers(self):
        ctype = {"int": ctypes.c_int, "void": None, "size_t": ctypes.c_size_t, "const char*": ctypes.c_char_p}
        with open(HEADER, encoding="utf-8") as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        declared = {}
        for ret, name, args in re.findall(r"(\w[\w\s\*]*?)\s+(fp_\w+)\s*\(([^)]*)\)\s*;", text):
            ret = ret.replace("__attribute__((visibility(\"default\")))", "").strip()
            params = [] if args.strip() in ("", "void") else [ctype[a.rsplit(" ", 1)[0].strip()] for a in args.split(",")]
            declared[name] = (ctype[ret], params)
        self.assertEqual(set(declared), set(cudnn_diagnose.SIGNATURES), HEADER)
        for name, (restype, argtypes) in cudnn_diagnose.SIGNATURES.items():
            self.assertEqual((restype, list(argtypes)), declared[name], name)

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
