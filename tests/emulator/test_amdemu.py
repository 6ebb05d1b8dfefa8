#!/usr/bin/env python3
"""The emulator harness's own parts, no emulator needed: msgpack, code-object parsing, the argument
segment, the user SGPRs and LDS field, the invalidate patch, the kernel name pattern, bf16 rounding.
With a code object from this build tree (argv[1], kernels_mma.mma_amd_check.co for gfx1100), also
the real thing: every kernel's descriptor and metadata agree, the patch sites are buffer_gl*_inv."""
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "emulator"))

import numpy as np  # noqa: E402

from amdemu import attention, backward, defects, kernarg, launch, patch, probes  # noqa: E402
from amdemu.codeobject import CodeObject, CodeObjectError, msgpack_unpack  # noqa: E402

CO = sys.argv.pop(1) if len(sys.argv) > 1 else None


class Msgpack(unittest.TestCase):
    def test_the_kinds_metadata_uses(self):
        # {"a": [1, -1, True, None], "bb": 300, "c": 2.5 (float64), "d": "x" * 40 (str8)}
        data = (b"\x84" + b"\xa1a" + b"\x94\x01\xff\xc3\xc0" + b"\xa2bb" + b"\xcd\x01\x2c" + b"\xa1c" +
                b"\xcb" + struct.pack(">d", 2.5) + b"\xa1d" + b"\xd9\x28" + b"x" * 40)
        v, n = msgpack_unpack(data)
        self.assertEqual(v, {"a": [1, -1, True, None], "bb": 300, "c": 2.5, "d": "x" * 40})
        self.assertEqual(n, len(data))

    def test_an_unknown_type_is_an_error(self):
        with self.assertRaises(CodeObjectError):
            msgpack_unpack(b"\xc1")


ARGS = [{".value_kind": "by_value", ".offset": 0, ".size": 8},
        {".value_kind": "by_value", ".offset": 8, ".size": 4},
        {".value_kind": "hidden_block_count_x", ".offset": 16, ".size": 4},
        {".value_kind": "hidden_block_count_y", ".offset": 20, ".size": 4},
        {".value_kind": "hidden_group_size_x", ".offset": 28, ".size": 2},
        {".value_kind": "hidden_remainder_x", ".offset": 34, ".size": 2},
        {".value_kind": "hidden_grid_dims", ".offset": 80, ".size": 2},
        {".value_kind": "hidden_printf_buffer", ".offset": 88, ".size": 8}]


class Kernarg(unittest.TestCase):
    def test_explicit_and_hidden_land_at_their_offsets(self):
        buf = kernarg.pack(ARGS, 96, {0: b"\x11" * 8, 1: kernarg.i32(-2)}, grid=(3, 5, 1), block=(128, 1, 1))
        self.assertEqual(len(buf), 96)
        self.assertEqual(bytes(buf[0:8]), b"\x11" * 8)
        self.assertEqual(struct.unpack_from("<i", buf, 8)[0], -2)
        self.assertEqual(struct.unpack_from("<II", buf, 16), (3, 5))
        self.assertEqual(struct.unpack_from("<H", buf, 28)[0], 128)
        self.assertEqual(struct.unpack_from("<H", buf, 34)[0], 0)
        self.assertEqual(struct.unpack_from("<H", buf, 80)[0], 2)
        self.assertEqual(bytes(buf[88:96]), b"\0" * 8)

    def test_a_missing_or_wrong_sized_argument_is_refused(self):
        with self.assertRaisesRegex(kernarg.KernargError, "explicit argument 1"):
            kernarg.pack(ARGS, 96, {0: b"\0" * 8}, (1, 1, 1), (64, 1, 1))
        with self.assertRaisesRegex(kernarg.KernargError, "3 bytes given"):
            kernarg.pack(ARGS, 96, {0: b"\0" * 8, 1: b"\0" * 3}, (1, 1, 1), (64, 1, 1))
        with self.assertRaisesRegex(kernarg.KernargError, r"\[5\]"):
            kernarg.pack(ARGS, 96, {0: b"\0" * 8, 1: b"\0" * 4, 5: b""}, (1, 1, 1), (64, 1, 1))

    def test_an_unknown_hidden_argument_is_refused(self):
        with self.assertRaisesRegex(kernarg.KernargError, "hidden_new_thing"):
            kernarg.pack([{".value_kind": "hidden_new_thing", ".offset": 0, ".size": 8}], 8, {}, (1, 1, 1), (1, 1, 1))


class Launch(unittest.TestCase):
    def test_user_sgprs_follow_the_enabled_properties(self):
        # dispatch_ptr (bit 1) and kernarg_segment_ptr (bit 3): 4 SGPRs, dispatch first.
        self.assertEqual(launch.user_sgprs(0b1010, 0x1_2345_6780, 0xAB_0000_0010, 0),
                         [0x10, 0xAB, 0x23456780, 0x1])
        self.assertEqual(len(launch.user_sgprs(0b1111111, 0, 0, 0)), 15)

    def test_lds_goes_into_rsrc2_in_512_byte_granules(self):
        r = launch.rsrc2_with_lds(0x19C | (7 << 15), 1000)
        self.assertEqual((r >> 15) & 0x1FF, 2)
        self.assertEqual(r & 0x7FFF, 0x19C)
        with self.assertRaises(launch.LaunchError):
            launch.rsrc2_with_lds(0, 512 * 512)

    def test_targets_map_to_the_emulators_architectures(self):
        self.assertEqual([launch.arch_of(t) for t in ("gfx1100", "gfx1201", "gfx942")], ["rdna3", "rdna4", "cdna"])
        with self.assertRaises(launch.LaunchError):
            launch.arch_of("gfx1030")

    def test_a_missing_emulator_is_named(self):
        with self.assertRaisesRegex(launch.LaunchError, "FLASHPROBE_AMD_EMULATOR=/nonexistent"):
            launch.load_emulator("/nonexistent")


LISTING = """
0000000000002b00 <kernel>:
\ts_load_b64 s[0:1], s[0:1], 0x0                             // 000000002B00: F4040000 F8000000
\tbuffer_gl1_inv                                             // 000000002B08: E0B80000 00000000
\tbuffer_gl0_inv                                             // 000000002B10: E0AC0000 00000000
\ts_nop 0                                                    // 000000002B18: BF800000
\tglobal_wb scope:SCOPE_SE                                   // 0000000072CC: EE0B007C 00040000 00000000
"""


class Patch(unittest.TestCase):
    def test_the_invalidates_are_found_with_their_sizes(self):
        self.assertEqual(patch.find(LISTING), [(0x2B08, 8), (0x2B10, 8), (0x72CC, 12)])

    def test_each_becomes_two_s_nop_and_nothing_else_moves(self):
        img = bytearray(b"\xee" * 0x72D8)
        self.assertEqual(patch.apply(img, patch.find(LISTING)), 3)
        self.assertEqual(bytes(img[0x72CC:0x72D8]), bytes.fromhex("000080bf") * 3)
        self.assertEqual(bytes(img[0x2B08:0x2B18]), bytes.fromhex("000080bf") * 4)
        self.assertEqual(bytes(img[0x2B00:0x2B08]), b"\xee" * 8)
        self.assertEqual(bytes(img[0x2B18:0x2B20]), b"\xee" * 8)


GFX12_LISTING = """
0000000000005e00 <kern_a>:
\tv_wmma_f32_16x16x16_f16 v[57:64], v[77:80], v[33:36], 0    // 000000007650: CC404039 1A02434D
\tv_wmma_f32_16x16x16_f16 v[57:64], v[73:76], v[162:165], v[57:64] // 00000000767C: CC404039 1CE7454D
\tv_wmma_f32_16x16x16_fp8_fp8 v[4:7], v8, v9, 1.0             // 000000007690: CC464004 1BCA1308

0000000000011a00 <kern_b>:
\tv_wmma_f32_16x16x16_bf16 v[25:32], v[33:36], v[45:48], v[25:32] // 0000000133A4: CC414019 1C665B21
"""


class InlineConstantC(unittest.TestCase):
    def test_wmmas_with_a_constant_c_are_counted_per_kernel(self):
        self.assertEqual(defects.wmma_const_c(GFX12_LISTING, "kern_a"), 2)
        self.assertEqual(defects.wmma_const_c(GFX12_LISTING, "kern_b"), 0)
        self.assertEqual(defects.wmma_const_c(GFX12_LISTING, "absent"), 0)

    def test_hardware_answer_passes(self):
        r = defects.judge_inline_c(np.full(256, 16.0, np.float32))
        self.assertTrue(r["passed"])
        self.assertFalse(r["c_read_from_v128"])

    def test_c_read_from_v128_is_named(self):
        out = np.tile(16.0 + np.arange(1, 9, dtype=np.float32), 32)
        r = defects.judge_inline_c(out)
        self.assertFalse(r["passed"])
        self.assertTrue(r["c_read_from_v128"])
        self.assertEqual(r["wrong"], 256)
        self.assertIn("v128 + i", r["evidence"])

    def test_any_other_difference_fails_without_that_diagnosis(self):
        out = np.full(256, 16.0, np.float32)
        out[3] = np.nan
        r = defects.judge_inline_c(out)
        self.assertFalse(r["passed"])
        self.assertFalse(r["c_read_from_v128"])
        self.assertEqual(r["wrong"], 1)


class EmulatorState(unittest.TestCase):
    """A run on a changed emulator checkout says so: the diff's sha256 and files, and the label."""

    def test_a_clean_and_a_changed_checkout(self):
        from amdemu import __main__ as m
        with tempfile.TemporaryDirectory() as d:
            git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
            subprocess.run(["git", "init", "-q", d], check=True)
            with open(os.path.join(d, "emu.py"), "w") as f:
                f.write("a = 1\n")
            subprocess.run(git + ["-C", d, "add", "emu.py"], check=True)
            subprocess.run(git + ["-C", d, "commit", "-qm", "x"], check=True)
            clean = m.emulator_state(d)
            self.assertIsNone(clean["local_changes"])
            self.assertEqual(m.source_label(clean), f"emulated (tinygrad emulator, commit {clean['commit']}), not hardware")
            with open(os.path.join(d, "emu.py"), "w") as f:
                f.write("a = 2\nb = 3\n")
            changed = m.emulator_state(d)
            lc = changed["local_changes"]
            self.assertEqual(len(lc["diff_sha256"]), 64)
            self.assertEqual(lc["files"], [{"added": "2", "removed": "1", "path": "emu.py"}])
            self.assertIn(f"with local changes, diff sha256 {lc['diff_sha256'][:12]}", m.source_label(changed))
            self.assertTrue(m.source_label(changed).endswith("not hardware"))


class AtomDMap(unittest.TestCase):
    """probes.locate_d finds which element of A*B each D slot received: here a model of the MFMA 32x32
    map in tinygrad's emu.py (C accumulated in place, the product of row 16*(lane/32) + slot) against
    the documented one (rows 8*(slot/4) + 4*(lane/32) + slot%4), and the declared map itself."""

    def run_model(self, row_of):
        rng = np.random.default_rng(3)
        C = [[(8 * (s // 4) + 4 * (l // 32) + s % 4, l % 32) for s in range(16)] for l in range(64)]
        mats, c, d = [], np.zeros((8, 64, 16), np.float32), np.zeros((8, 64, 16), np.float32)
        for e in range(8):
            am, bm, cm = (rng.integers(-3, 4, (32, 8)).astype(np.float32), rng.integers(-3, 4, (8, 32)).astype(np.float32),
                          rng.integers(-8, 9, (32, 32)).astype(np.float32))
            mats.append((am, bm, cm))
            ab = am @ bm
            for l in range(64):
                for s in range(16):
                    c[e, l, s] = cm[C[l][s]]
                    d[e, l, s] = ab[row_of(l, s), l % 32] + c[e, l, s]
        return probes.locate_d(mats, c, d, C), C

    def test_the_emulators_32x32_map_is_found_and_described(self):
        loc, C = self.run_model(lambda l, s: 16 * (l // 32) + s)
        self.assertEqual((loc["located"], loc["used"]), (1024, 1024))
        self.assertEqual(loc["moved"], 768)  # slots 0-3 of lanes 0-31 and 12-15 of lanes 32-63 agree
        self.assertEqual(probes.describe_d_map(loc, C, (0, 32)),
                         "lane 0: rows 0-15 (declared 0-3, 8-11, 16-19, 24-27); "
                         "lane 32: rows 16-31 (declared 4-7, 12-15, 20-23, 28-31)")

    def test_the_declared_map_moves_nothing(self):
        loc, _ = self.run_model(lambda l, s: 8 * (s // 4) + 4 * (l // 32) + s % 4)
        self.assertEqual((loc["located"], loc["moved"]), (1024, 0))


class Attention(unittest.TestCase):
    def test_kernel_pattern_is_the_mangled_instantiation(self):
        plan = {"atom": "GFX11_WMMA_16x16x16_F32F16_W32", "elem": "F16", "d": 64, "waves": 4, "bn": 64}
        name = ("_ZN10flashprobe7kernels3dev7mma_fwdINS_5atoms30GFX11_WMMA_16x16x16_F32F16_W32ENS1_3F16ELi64ELi4ELi64ELi1"
                "ELb1ELb0ELi0EEEvNS0_6ParamsENS1_8MmaOrderEf")
        import re
        self.assertRegex(name, attention.kernel_pattern(plan))
        self.assertNotRegex(name.replace("Li64ELi4", "Li128ELi4"), attention.kernel_pattern(plan))

    def test_opsel_atoms_are_the_template_instances(self):
        name = "_ZN6fp_amd16atom_experimentsIN10flashprobe5atoms36GFX11_WMMA_16x16x16_F16F16_W32_OPSELILb1EEEEviPKfS5_S5_Pf"
        self.assertRegex(name, probes.kernel_pattern("GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI"))
        self.assertNotRegex(name, probes.kernel_pattern("GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_LO"))
        self.assertRegex("atom_experimentsIN10flashprobe5atoms25CDNA_MFMA_16x16x16_F32F16EEEv",
                         probes.kernel_pattern("CDNA_MFMA_16x16x16_F32F16"))

    def test_bf16_rounds_to_nearest_even(self):
        x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5], dtype=np.float32)
        self.assertEqual(attention.bf16_bits(x).tolist(), [0x3F80, 0x3F80, 0x3F82, 0xC020])


@unittest.skipUnless(CO, "no code object given (built by amd_kernels_mma with ld.lld-19)")
class RealCodeObject(unittest.TestCase):
    def setUp(self):
        self.co = CodeObject(open(CO, "rb").read())

    def test_every_kernel_is_consistent(self):
        self.assertGreaterEqual(len(self.co.kernels), 10)
        for k in self.co.kernels.values():
            d = k.descriptor
            self.assertLessEqual(len(launch.user_sgprs(d.kernel_code_properties, 0, 0, 0)), d.user_sgpr_count, k.name)
            self.assertEqual(d.kernarg_size, k.kernarg_size, k.name)
            self.assertEqual(d.group_segment_fixed_size, k.meta[".group_segment_fixed_size"], k.name)
            self.assertEqual(d.private_segment_fixed_size, k.meta[".private_segment_fixed_size"], k.name)
            entry = k.kd_addr + d.kernel_code_entry_byte_offset
            self.assertEqual(entry, self.co.symbols[k.name][0], k.name)
            kinds = [a[".value_kind"] for a in k.args]
            self.assertEqual(kinds[:3], ["by_value"] * 3, k.name)
            self.assertIn("hidden_block_count_x", kinds)

    def test_the_patch_sites_hold_buffer_gl_inv(self):
        mcpu = os.path.basename(os.path.dirname(CO))
        sites = patch.find(patch.disassemble(CO, mcpu))
        self.assertGreater(len(sites), 0)
        img = self.co.image()
        for va, size in sites:
            self.assertEqual(size, 8)
            self.assertIn(struct.unpack_from("<I", img, va)[0], (0xE0AC0000, 0xE0B80000))

    def test_every_backward_kernel_is_there(self):
        """The AMD backward's code object (amd_kernels_mma_bwd, beside this one): the three kernels of
        every shipped (head dim, dtype), found by backward.kernel_patterns as the harness finds them."""
        path = os.path.join(os.path.dirname(CO), "kernels_mma_bwd.mma_bwd_amd_check.co")
        self.assertTrue(os.path.exists(path), f"{path} is missing: cmake --build ... --target amd_kernels_mma_bwd")
        co = CodeObject(open(path, "rb").read())
        self.assertEqual(len(co.kernels), 9)  # bwd_rowdot + (dK/dV, dQ) x (d 64, 128) x (f16, bf16)
        for d in (64, 128):
            for atom, elem in (("GFX11_WMMA_16x16x16_F32F16_W32", "F16"), ("GFX11_WMMA_16x16x16_F32BF16_W32", "BF16")):
                plan = {"atom": atom, "elem": elem, "d": d, "tile": 32 if d > 64 else 64}
                for pattern in backward.kernel_patterns(plan).values():
                    co.kernel(pattern)

    def test_every_shipped_instantiation_is_there(self):
        for d in (64, 80, 96, 128, 256):
            for atom, elem in (("GFX11_WMMA_16x16x16_F32F16_W32", "F16"), ("GFX11_WMMA_16x16x16_F32BF16_W32", "BF16")):
                plan = {"atom": atom, "elem": elem, "d": d, "waves": 4, "bn": 32 if d > 128 else 64}
                self.co.kernel(attention.kernel_pattern(plan))


if __name__ == "__main__":
    unittest.main()
