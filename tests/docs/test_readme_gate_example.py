#!/usr/bin/env python3
"""README's "Gate your own kernel": its nvcc line builds the example plug-in (run as written, from the
repository root, into a temporary folder), the library exports the entry point and names itself, and
its `flashprobe gate` command runs on it: with a GPU it must hold (exit 0, JUnit with testcases that
ran); without one it must exit 2 naming the reason and write no JUnit that could read as a pass.

    test_readme_gate_example.py ROOT NVCC FLASHPROBE
"""
import ctypes
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT, NVCC, FLASHPROBE = sys.argv[1:4] if len(sys.argv) >= 4 else ("", "", "")


def readme_section():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Gate your own kernel\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        raise AssertionError("README.md has no '## Gate your own kernel' section")
    return m.group(1)


def command(section, first_word):
    """The line of a ```sh block that starts with first_word."""
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith(first_word + " "):
                return shlex.split(line)
    raise AssertionError(f"no '{first_word} ...' line in a ```sh block of the section")


def has_gpu():
    p = subprocess.run([FLASHPROBE, "devices"], capture_output=True, text=True, timeout=60)
    return p.returncode == 0 and "none" not in p.stdout.lower()


class ReadmeGateExample(unittest.TestCase):
    def test_the_example_builds_and_the_gate_command_runs_on_it(self):
        section = readme_section()
        build = command(section, "nvcc")
        gate = command(section, "flashprobe")
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "libnaive.so")
            # Only the output file moves to the temporary folder; the rest runs as written.
            build = [NVCC] + build[1:]
            build[build.index("-o") + 1] = lib
            p = subprocess.run(build, cwd=ROOT, capture_output=True, text=True, timeout=900)
            self.assertEqual(p.returncode, 0, p.stderr)
            entry = ctypes.CDLL(lib).flashprobe_plugin_v1  # the exported entry point
            entry.restype = ctypes.POINTER(ctypes.c_uint32 * 2)
            self.assertEqual(entry().contents[0], 1, "ABI version")

            args = [FLASHPROBE] + gate[1:]
            swap = {"./libnaive.so": lib, "gate.xml": os.path.join(d, "gate.xml"), "gate.json": os.path.join(d, "gate.json")}
            args = [swap.get(a, a) for a in args]
            p = subprocess.run(args, capture_output=True, text=True, timeout=1200)
            junit = os.path.join(d, "gate.xml")
            if has_gpu():
                self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
                ran = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("skipped") is None]
                self.assertTrue(ran, "no testcase ran")
            else:
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertRegex(p.stderr, r"(?i)no (gpu|device)")
                if os.path.exists(junit):  # if one is written, it must not say everything passed
                    root = ET.parse(junit).getroot()
                    self.assertTrue(int(root.get("failures", "0")) + int(root.get("skipped", "0")) > 0)
                print(f"no GPU here: the gate said {p.stderr.strip()!r} (exit 2), as it must")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
