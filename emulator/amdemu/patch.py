"""Cache invalidates the emulator cannot decode, replaced in the loaded code image.

tinygrad's emulator has no caches and does not decode buffer_gl0_inv / buffer_gl1_inv (the invalidates
of an acquire fence, 8 bytes each on gfx11) nor gfx12's global_wb / global_inv (the write-back of a
release fence and the invalidate of an acquire fence, 12 bytes). Each is overwritten in the image
with `s_nop 0`, one per 4 bytes (exact: without caches there is nothing to write back or invalidate). The instructions are found by disassembling
the code object (llvm-objdump), never by substituting at decode time: the emulator's handlers read
operand fields from the bytes at the real PC, so a substituted instruction would run with the wrong
operands (a v_mov reads as v_mov_b32 v0, s0 and corrupts a live register).
"""
import re
import subprocess

S_NOP_0 = bytes.fromhex("000080bf")  # 0xBF800000, little-endian: SOPP s_nop 0 (gfx11, gfx12)
PATCHED = ("buffer_gl0_inv", "buffer_gl1_inv", "global_wb", "global_inv")
# llvm-objdump -d: "\tbuffer_gl0_inv                                            // 000000002B94: E0AC0000 00000000"
LINE = re.compile(r"^\s+(\w+)[^/]*//\s*([0-9A-Fa-f]+):((?:\s+[0-9A-Fa-f]{8})+)\s*$")


def find(objdump_text, mnemonics=PATCHED):
    """[(vaddr, size)] of each instruction in the listing whose mnemonic is one of `mnemonics`."""
    out = []
    for line in objdump_text.splitlines():
        m = LINE.match(line)
        if m and m.group(1) in mnemonics:
            out.append((int(m.group(2), 16), 4 * len(m.group(3).split())))
    return out


def disassemble(path, mcpu, objdump="llvm-objdump-19"):
    return subprocess.run([objdump, "-d", f"--mcpu={mcpu}", path], check=True, capture_output=True, text=True).stdout


def apply(image, sites):
    """Overwrite each (vaddr, size) with s_nop 0; returns how many were patched."""
    for va, size in sites:
        if size % 4:
            raise ValueError(f"instruction at 0x{va:x} is {size} bytes, not a multiple of 4")
        image[va:va + size] = S_NOP_0 * (size // 4)
    return len(sites)
