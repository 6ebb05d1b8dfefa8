"""Demonstrations of emulator defects, each a tiny kernel whose right answer needs no oracle.

scratch_is_per_wave (emulator/scratch_probe.cu): 4 waves each fill a private array that lives in
scratch, meet at a barrier and read it back; on AMD hardware every wave has its own scratch, so
out[t] = 1000 * wave + lane. An emulator whose waves of a workgroup share one scratch area (addressed
by lane only) returns the last wave's values to every wave. Kernels that spill registers to scratch
(the gfx11 mma kernel at d = 128 and 256) then fail for the emulator's reason, not their own.

wmma_inline_c_is_honoured (emulator/wmma_inline_c.cu, gfx1201): one gfx12 WMMA whose C operand is
the inline constant 0 (clang-19's encoding of a zero accumulator on gfx12), A = B = ones (f16), with
v128 + i holding i + 1 when it runs. Hardware gives D = 16 in every slot. An emulator that reads C
from VGPRs whatever SRC2 encodes reads operand 128 (the constant 0) as v128 and gives 16 + (i + 1) in
slot i. The gfx12 mma kernel starts every S = Q K^T with such a WMMA, so its S picks up whatever
v128-v135 hold: in the bf16 build v131 holds an integer whose bits are a NaN, so accumulator slot 3
(rows 3 and 11 of each 16-row tile) comes out NaN.
"""
import re

import numpy as np

from . import kernarg, launch

WAVES = 4


def scratch_is_per_wave(emu, img, wave_size=32):
    kern = img.co.kernel(r"^scratch_is_per_wave$")
    n = WAVES * wave_size
    out = np.full(n, -1, np.int32)
    explicit = {0: out.ctypes.data.to_bytes(8, "little"), 1: kernarg.i32(64), 2: kernarg.i32(5)}
    seg = kernarg.pack(kern.args, kern.kernarg_size, explicit, (1, 1, 1), (n, 1, 1))
    launch.launch(emu, img, kern, (1, 1, 1), (n, 1, 1), seg)
    want = np.array([1000 * (t // wave_size) + t % wave_size for t in range(n)], np.int32)
    wrong = int((out != want).sum())
    waves_seen = sorted({int(v) // 1000 for v in out})
    return {"check": "scratch is private to each wave", "kernel": kern.name,
            "scratch_bytes_per_lane": kern.descriptor.private_segment_fixed_size,
            "threads": n, "wrong": wrong, "passed": wrong == 0,
            "evidence": (f"{wrong} of {n} lanes read another wave's scratch (every wave read the values of wave(s) "
                         f"{waves_seen}); hardware gives each wave its own scratch") if wrong else
                        "every lane read back its own wave's values"}


INLINE_C_MARKERS = [float(i + 1) for i in range(8)]  # v128 + i holds i + 1 (wmma_inline_c.cu)
F16_ONE = 0x3C00


def judge_inline_c(out):
    """Verdict on wmma_inline_c's output (32 lanes x 8 slots of f32): hardware gives 16 everywhere."""
    d = np.asarray(out, np.float32).reshape(32, 8)
    wrong = int((d != 16.0).sum())
    read_v128 = bool((d == 16.0 + np.array(INLINE_C_MARKERS, np.float32)[None, :]).all())
    if not wrong:
        evidence = "D = A*B = 16 in all 256 slots: the inline constant 0 was used as C"
    elif read_v128:
        evidence = ("D = 16 + (i + 1) in every slot i of every lane: C was read from v128 + i (operand 128, "
                    "the inline constant 0, taken as a VGPR); hardware gives D = 16")
    else:
        evidence = f"{wrong} of 256 D slots differ from 16 (A = B = ones, C = the inline constant 0)"
    return {"wrong": wrong, "c_read_from_v128": read_v128, "passed": wrong == 0, "evidence": evidence}


def wmma_inline_c_is_honoured(emu, img):
    kern = img.co.kernel(r"^wmma_inline_c$")
    out = np.full(32 * 8, np.nan, np.float32)
    ab = np.full(2 * 32 * 4, F16_ONE | (F16_ONE << 16), np.uint32)
    explicit = {0: out.ctypes.data.to_bytes(8, "little"), 1: ab.ctypes.data.to_bytes(8, "little")}
    seg = kernarg.pack(kern.args, kern.kernarg_size, explicit, (1, 1, 1), (32, 1, 1))
    launch.launch(emu, img, kern, (1, 1, 1), (32, 1, 1), seg)
    r = judge_inline_c(out)
    return {"check": "a gfx12 WMMA takes an inline-constant C as that constant", "kernel": kern.name,
            "target": img.mcpu, "threads": 32, **r}


# llvm-objdump -d: "<name>:" opens a kernel; a WMMA line "\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], 0 // ..."
_HEAD = re.compile(r"^[0-9a-f]+ <([^>]+)>:")
_WMMA_CONST_C = re.compile(r"^\s+v_wmma_\w+ v\[\d+:\d+\], v(?:\[\d+:\d+\]|\d+), v(?:\[\d+:\d+\]|\d+), (?!v)[^\s/]+")


def wmma_const_c(listing, kernel_name):
    """How many WMMAs of kernel `kernel_name` in an llvm-objdump listing take C as a constant."""
    n, inside = 0, False
    for line in listing.splitlines():
        h = _HEAD.match(line)
        if h:
            inside = h.group(1) == kernel_name
        elif inside and _WMMA_CONST_C.match(line):
            n += 1
    return n
