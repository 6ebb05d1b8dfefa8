"""Demonstrations of emulator defects, each a tiny kernel whose right answer needs no oracle.

scratch_is_per_wave (emulator/scratch_probe.cu): 4 waves each fill a private array that lives in
scratch, meet at a barrier and read it back; on AMD hardware every wave has its own scratch, so
out[t] = 1000 * wave + lane. An emulator whose waves of a workgroup share one scratch area (addressed
by lane only) returns the last wave's values to every wave. Kernels that spill registers to scratch
(the gfx11 mma kernel at d = 128 and 256) then fail for the emulator's reason, not their own.
"""
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
