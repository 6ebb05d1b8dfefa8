#!/usr/bin/env python3
"""tools/amd_resource_catalogue.py: a folder of resources records becomes one table row per kernel and
target (labelled mma / tiled / probe), a kernel that is only a trap there is left out, and a
record with a call or a dynamic stack left fails the whole catalogue (exit 1, naming the kernel)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "amd_resource_catalogue.py")
MMA = "_ZN10flashprobe7kernels3dev7mma_fwdINS_5atoms30GFX11_WMMA_16x16x16_F32F16_W32ENS1_3F16ELi64ELi4ELi64ELi1ELb1EEEvNS0_6ParamsENS1_8MmaOrderEf"
PROBE = "_ZN6fp_amd16atom_experimentsIN10flashprobe5atoms30CDNA_MFMA_16x16x32_F32E4M3E5M2EEEviPKfS5_S5_Pf"


def kernel(name, target, calls=0, dyn=False, traps=False, mi=None):
    return {"target": target, "kernel": name, "wave_size": 64 if target == "gfx942" else 32, "vgpr": 40, "agpr": 0,
            "sgpr": 20, "lds_bytes": 1024, "scratch_bytes": 0, "waves_per_simd": 8, "occupancy_limited_by": "vgpr",
            "calls": calls, "dynamic_stack": dyn, "matrix_instructions": (0 if traps else 8) if mi is None else mi, "traps": traps}


def run(kernels):
    with tempfile.TemporaryDirectory() as d:
        rec = {"schema": "flashprobe.resources/1", "commit": "c" * 40, "unit": "u", "kernels": kernels}
        with open(os.path.join(d, "resources_u.json"), "w") as f:
            json.dump(rec, f)
        return subprocess.run([sys.executable, TOOL, d], capture_output=True, text=True)


class Catalogue(unittest.TestCase):
    def test_rows_for_kernels_with_matrix_instructions(self):
        # A kernel with a trap path beside its matrix instructions stays; one that is only a trap goes.
        r = run([kernel(MMA, "gfx1100"), kernel(MMA, "gfx942", traps=True), kernel(PROBE, "gfx942"),
                 kernel(PROBE, "gfx1201", traps=True, mi=8)])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l for l in r.stdout.splitlines() if l.startswith("| gfx")]
        self.assertEqual(rows, [
            "| gfx1100 | mma d=64 f16 (GFX11_WMMA_16x16x16_F32F16_W32, 4 waves, 64-key tiles) | 32 | 40 | 0 | 20 | 1024 | 0 | 8 | vgpr |",
            "| gfx1201 | probe CDNA_MFMA_16x16x32_F32E4M3E5M2 | 32 | 40 | 0 | 20 | 1024 | 0 | 8 | vgpr |",
            "| gfx942 | probe CDNA_MFMA_16x16x32_F32E4M3E5M2 | 64 | 40 | 0 | 20 | 1024 | 0 | 8 | vgpr |"])

    def test_a_call_left_fails_and_names_the_kernel(self):
        r = run([kernel(MMA, "gfx1100"), kernel(PROBE, "gfx942", calls=1)])
        self.assertEqual(r.returncode, 1)
        self.assertIn("gfx942 " + PROBE + ": calls 1", r.stderr)
        self.assertNotIn("| gfx", r.stdout)

    def test_a_dynamic_stack_fails(self):
        r = run([kernel(MMA, "gfx1100", dyn=True)])
        self.assertEqual(r.returncode, 1)
        self.assertIn("dynamic stack True", r.stderr)

    def test_an_empty_folder_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, TOOL, d], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no resources_*.json", r.stderr)


if __name__ == "__main__":
    unittest.main()
