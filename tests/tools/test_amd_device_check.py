#!/usr/bin/env python3
"""tools/amd_device_check.py --require-no-calls: a unit whose assembly still calls a device-library
function (what -nogpulib left: s_swappc_b64 to __ockl_get_local_id) or whose kernel uses a dynamic
stack fails, naming it; the same unit with the call inlined passes and records calls 0."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "amd_device_check.py")

UNIT = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
k:
\ts_load_b64 s[0:1], s[0:1], 0x0
{body}
\ts_endpgm
.Lfunc_end0:
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name:           k
    .vgpr_count:     40
    .sgpr_count:     20
    .wavefront_size: 32
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: {scratch}
    .uses_dynamic_stack: {dyn}
    .max_flat_workgroup_size: 128
...
\t.end_amdgpu_metadata
"""


def run(body, dyn, scratch):
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "gfx1100"))
        with open(os.path.join(d, "gfx1100", "u.x.s"), "w") as f:
            f.write(UNIT.format(body=body, dyn=dyn, scratch=scratch))
        out = os.path.join(d, "r.json")
        r = subprocess.run([sys.executable, TOOL, "--name", "u", "--asm-dir", d, "--targets", "gfx1100",
                            "--require-no-calls", "--resources-out", out], capture_output=True, text=True)
        return r.returncode, r.stdout, json.load(open(out))


class RequireNoCalls(unittest.TestCase):
    def test_a_remaining_call_and_dynamic_stack_fail(self):
        rc, out, rec = run("\ts_getpc_b64 s[4:5]\n\ts_swappc_b64 s[30:31], s[4:5]", "true", 96)
        self.assertEqual(rc, 1, out)
        self.assertIn("1 call(s) remain", out)
        self.assertIn("uses a dynamic stack", out)
        self.assertEqual(rec["kernels"][0]["calls"], 1)
        self.assertTrue(rec["kernels"][0]["dynamic_stack"])

    def test_inlined_code_passes(self):
        rc, out, rec = run("\tv_mov_b32 v0, 0", "false", 0)
        self.assertEqual(rc, 0, out)
        self.assertEqual(rec["kernels"][0]["calls"], 0)
        self.assertFalse(rec["kernels"][0]["dynamic_stack"])


if __name__ == "__main__":
    unittest.main()
