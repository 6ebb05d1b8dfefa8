"""The kernel argument segment: explicit arguments where the metadata puts them, and the hidden
arguments of code-object v5 (the HIP runtime's part) filled from the launch.

    buf = pack(kernel.args, kernel.kernarg_size, {0: params_bytes, 1: order_bytes, 2: f32},
               grid=(gx, gy, gz), block=(bx, 1, 1), dynamic_lds=0)
"""
import struct

# Hidden arguments the harness fills; every other pointer-like hidden argument (printf and hostcall
# buffers, heap, queues, completion action, multigrid sync, private/shared apertures) is left null:
# a kernel that uses one of them does not run here, and none of flashprobe's do.
NULL_HIDDEN = {"hidden_none", "hidden_printf_buffer", "hidden_hostcall_buffer", "hidden_default_queue",
               "hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_heap_v1", "hidden_queue_ptr",
               "hidden_private_base", "hidden_shared_base"}


class KernargError(ValueError):
    pass


def hidden_value(kind, size, grid, block, dynamic_lds):
    axes = {"x": 0, "y": 1, "z": 2}
    if kind.startswith("hidden_block_count_"):
        return grid[axes[kind[-1]]]
    if kind.startswith("hidden_group_size_"):
        return block[axes[kind[-1]]]
    if kind.startswith("hidden_remainder_"):
        return 0  # whole workgroups only
    if kind.startswith("hidden_global_offset_"):
        return 0
    if kind == "hidden_grid_dims":
        return 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1
    if kind == "hidden_dynamic_lds_size":
        return dynamic_lds
    if kind in NULL_HIDDEN:
        return 0
    raise KernargError(f"hidden argument {kind!r} ({size} bytes) is not one the harness knows how to fill")


def pack(args, kernarg_size, explicit, grid, block, dynamic_lds=0):
    """args: the kernel's .args metadata; explicit: {index of an explicit argument: bytes}. Every
    explicit argument must be given, with its exact size."""
    buf = bytearray(kernarg_size)
    n_explicit = 0
    for i, a in enumerate(args):
        kind, off, size = a[".value_kind"], a[".offset"], a[".size"]
        if off + size > kernarg_size:
            raise KernargError(f"argument {i} ({kind}) at {off}+{size} exceeds the segment ({kernarg_size} bytes)")
        if kind.startswith("hidden_"):
            v = hidden_value(kind, size, grid, block, dynamic_lds)
            buf[off:off + size] = int(v).to_bytes(size, "little")
            continue
        n_explicit += 1
        if i not in explicit:
            raise KernargError(f"explicit argument {i} ({kind}, {size} bytes) was not given")
        b = bytes(explicit[i])
        if len(b) != size:
            raise KernargError(f"explicit argument {i}: {len(b)} bytes given, the kernel takes {size}")
        buf[off:off + size] = b
    extra = set(explicit) - {i for i, a in enumerate(args) if not a[".value_kind"].startswith("hidden_")}
    if extra:
        raise KernargError(f"arguments {sorted(extra)} given but the kernel has {n_explicit} explicit arguments")
    return buf


def f32(x):
    return struct.pack("<f", x)


def i32(x):
    return struct.pack("<i", x)
