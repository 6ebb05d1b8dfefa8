#!/usr/bin/env python3
"""What scripts/test relies on when it splits the fuzz targets and the Python steps (.ci/NOTES.md): every fuzz
target that tests/fuzz builds is listed by `scripts/fuzz --list` (scripts/test runs the list, the last one
beside pytest), and `scripts/test-python --tests-only` refuses to run without the environment it expects."""
import os, re, subprocess, tempfile, unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class FuzzList(unittest.TestCase):
    def test_lists_every_target_the_fuzz_project_builds(self):
        with open(os.path.join(ROOT, "tests", "fuzz", "CMakeLists.txt")) as f:
            built = re.search(r"foreach\(t ([^)]*)\)", f.read()).group(1).split()
        r = subprocess.run([os.path.join(ROOT, "scripts", "fuzz"), "--list"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), built)

    def test_unknown_argument_names_it(self):
        for args, named in ((["--lsit"], "'--lsit'"), (["--build-only", "jsn"], "'jsn'")):
            r = subprocess.run([os.path.join(ROOT, "scripts", "fuzz"), *args], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(named, r.stderr)


class TestPythonSteps(unittest.TestCase):
    def test_tests_only_without_an_environment_exits_2_naming_it(self):
        venv = os.path.join(tempfile.mkdtemp(), "no-venv")
        env = dict(os.environ, FLASHPROBE_PYTHON_VENV=venv)
        r = subprocess.run([os.path.join(ROOT, "scripts", "test-python"), "--tests-only"], capture_output=True,
                           text=True, env=env)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(venv, r.stderr)
        self.assertFalse(os.path.exists(venv), "--tests-only must not create the environment")


if __name__ == "__main__":
    unittest.main()
