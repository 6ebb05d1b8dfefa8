"""Launching one kernel of a loaded code object in tinygrad's AMD emulator (test/mockgpu/amd/emu.py).

    emu = load_emulator("/path/to/tinygrad")           # FLASHPROBE_AMD_EMULATOR
    img = LoadedImage(co, mcpu="gfx1100")               # image in host memory, invalidates patched
    launch(emu, img, kernel, grid, block, kernarg_bytes, dynamic_lds=0)

The emulator's device memory is the host's address space: buffers are host arrays, their addresses
go into the arguments as they are. What the HIP runtime and the command processor do at a dispatch,
this module does by hand: the user SGPRs the kernel descriptor enables (kernel_code_properties), the
workgroup's LDS size in rsrc2 (static + dynamic), the entry point (descriptor + entry offset).
"""
import ctypes
import importlib
import os
import sys

from . import patch

# kernel_code_properties bit -> (what, SGPRs), in the order the hardware loads them.
USER_SGPRS = [(0, "private_segment_buffer", 4), (1, "dispatch_ptr", 2), (2, "queue_ptr", 2),
              (3, "kernarg_segment_ptr", 2), (4, "dispatch_id", 2), (5, "flat_scratch_init", 2),
              (6, "private_segment_size", 1)]
LDS_SHIFT, LDS_MASK, LDS_GRANULE = 15, 0x1FF << 15, 512


class LaunchError(RuntimeError):
    pass


def arch_of(mcpu):
    """The emulator's architecture name for a gfx target."""
    if mcpu.startswith("gfx11"):
        return "rdna3"
    if mcpu.startswith("gfx12"):
        return "rdna4"
    if mcpu.startswith("gfx9"):
        return "cdna"
    raise LaunchError(f"target {mcpu}: the emulator models gfx11 (rdna3), gfx12 (rdna4) and gfx9 CDNA")


def load_emulator(root):
    """tinygrad's emulator module from a checkout at `root` (its test/mockgpu/amd/emu.py)."""
    path = os.path.join(root, "test", "mockgpu", "amd", "emu.py")
    if not os.path.isfile(path):
        raise LaunchError(f"FLASHPROBE_AMD_EMULATOR={root}: no test/mockgpu/amd/emu.py there "
                          "(a checkout of https://github.com/tinygrad/tinygrad)")
    if root not in sys.path:
        sys.path.insert(0, root)
    return importlib.import_module("test.mockgpu.amd.emu")


def user_sgprs(props, kernarg_addr, dispatch_addr, queue_addr):
    """The user SGPR values for kernel_code_properties `props`."""
    vals = []
    for bit, what, n in USER_SGPRS:
        if not props & (1 << bit):
            continue
        addr = {"dispatch_ptr": dispatch_addr, "queue_ptr": queue_addr, "kernarg_segment_ptr": kernarg_addr}.get(what)
        if addr is not None:
            vals += [addr & 0xFFFFFFFF, addr >> 32]
        else:
            vals += [0] * n  # no private segment buffer / scratch init: flat scratch is architected
    return vals


def rsrc2_with_lds(rsrc2, lds_bytes):
    """rsrc2 with the workgroup's LDS size (512-byte granules) in GRANULATED_LDS_SIZE, as the command
    processor sets it from the dispatch packet."""
    granules = -(-lds_bytes // LDS_GRANULE)
    if granules > 0x1FF:
        raise LaunchError(f"LDS of {lds_bytes} bytes exceeds the field ({0x1FF * LDS_GRANULE} bytes)")
    return (rsrc2 & ~LDS_MASK) | (granules << LDS_SHIFT)


class HostBuffer:
    """Zeroed host memory whose address the emulated kernel uses directly."""

    def __init__(self, n, align=256):
        self._raw = ctypes.create_string_buffer(n + align)
        self.addr = (ctypes.addressof(self._raw) + align - 1) // align * align
        self.size = n

    def write(self, data, offset=0):
        ctypes.memmove(self.addr + offset, bytes(data), len(data))

    def read(self, n=None, offset=0):
        return ctypes.string_at(self.addr + offset, self.size if n is None else n)


class LoadedImage:
    """A code object's loaded image in host memory, with the emulator's undecodable cache invalidates
    patched to s_nop (patch.py)."""

    def __init__(self, co, path, mcpu, objdump="llvm-objdump-19"):
        self.co, self.mcpu = co, mcpu
        self.buf = HostBuffer(co.image_size())
        img = co.image(base=self.buf.addr)
        self.listing = patch.disassemble(path, mcpu, objdump)
        self.patched = patch.apply(img, patch.find(self.listing))
        self.buf.write(img)

    def entry(self, kernel):
        return self.buf.addr + kernel.kd_addr + kernel.descriptor.kernel_code_entry_byte_offset


def dispatch_packet(grid, block, kernel, dynamic_lds):
    """An hsa_kernel_dispatch_packet_t (64 bytes) for kernels that read the dispatch pointer."""
    import struct
    pkt = bytearray(64)
    struct.pack_into("<HHHHHHIIIIIQQQQ", pkt, 0, 0, 3, block[0], block[1], block[2], 0,
                     grid[0] * block[0], grid[1] * block[1], grid[2] * block[2],
                     kernel.descriptor.private_segment_fixed_size,
                     kernel.descriptor.group_segment_fixed_size + dynamic_lds, 0, 0, 0, 0)
    return pkt


def launch(emu, img, kernel, grid, block, kernarg, dynamic_lds=0):
    """Run kernel over grid x block in the emulator. kernarg: the packed segment (kernarg.pack)."""
    d = kernel.descriptor
    if kernel.wavefront_size and kernel.wavefront_size != (64 if arch_of(img.mcpu) == "cdna" else 32):
        raise LaunchError(f"{kernel.name}: wave{kernel.wavefront_size}; the emulator runs {img.mcpu} in "
                          f"wave{64 if arch_of(img.mcpu) == 'cdna' else 32} only")
    args = HostBuffer(max(len(kernarg), 16))
    args.write(kernarg)
    pkt = HostBuffer(64)
    pkt.write(dispatch_packet(grid, block, kernel, dynamic_lds))
    queue = HostBuffer(256)
    sgprs = user_sgprs(d.kernel_code_properties, args.addr, pkt.addr, queue.addr)
    # rsrc2's count may exceed what the properties enable (LLVM reserves the rest); the workgroup IDs
    # follow all of them, so the rest are zeros.
    if len(sgprs) > d.user_sgpr_count:
        raise LaunchError(f"{kernel.name}: kernel_code_properties enable {len(sgprs)} user SGPRs, rsrc2 has room "
                          f"for {d.user_sgpr_count}")
    sgprs += [0] * (d.user_sgpr_count - len(sgprs))
    rsrc2 = rsrc2_with_lds(d.rsrc2, d.group_segment_fixed_size + dynamic_lds)
    keep = (args, pkt, queue)  # alive until the kernel has run
    emu.run_asm(img.entry(kernel), 0, grid[0], grid[1], grid[2], block[0], block[1], block[2], args.addr, rsrc2,
                d.private_segment_fixed_size, arch_of(img.mcpu), sgprs)
    del keep
