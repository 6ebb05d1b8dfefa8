"""Arrays on their way to and from the C++ side: host memory, bf16, torch."""
from __future__ import annotations

from typing import Any

import numpy as np

try:  # bf16 numpy arrays, when installed
    import ml_dtypes as _ml_dtypes

    BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None
    BFLOAT16 = None


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def host(x: Any, name: str) -> "tuple[Any, bool]":
    """x in host memory as something the extension reads without a copy (numpy, a CPU torch tensor,
    any DLPack or buffer-protocol array), and whether it holds ml_dtypes bf16 bit patterns."""
    if _is_torch(x):
        x = x.detach()
        if x.device.type != "cpu":
            x = x.cpu()  # device memory: one copy to the host
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
        return x, False
    if isinstance(x, np.ndarray):
        if BFLOAT16 is not None and x.dtype == BFLOAT16:
            return x.view(np.uint16), True
        return x, False
    if hasattr(x, "__dlpack_device__"):
        device_type, _ = x.__dlpack_device__()
        if device_type != 1:  # kDLCPU
            if hasattr(x, "get"):  # CuPy
                return x.get(), False
            try:
                return np.from_dlpack(x, device="cpu"), False
            except (TypeError, BufferError, RuntimeError) as e:
                raise TypeError(f"{name} is in device memory and could not be copied to the host ({e}); "
                                "copy it to the host first") from None
        return x, False
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__"):
        return np.asarray(x), False
    raise TypeError(f"{name} is a {type(x).__name__}, not an array (numpy, torch, or any DLPack array)")


def numpy_view(flat: np.ndarray, shape: tuple, strides: tuple, dtype: str) -> np.ndarray:
    """The tensor as a view of its flat buffer (bf16 as ml_dtypes.bfloat16 when installed, else its
    uint16 bit patterns)."""
    if dtype == "bf16" and BFLOAT16 is not None:
        flat = flat.view(BFLOAT16)
    return np.lib.stride_tricks.as_strided(flat, shape, tuple(s * flat.itemsize for s in strides), writeable=False)


def torch_view(flat: np.ndarray, shape: tuple, strides: tuple, dtype: str, device: Any):
    """The same tensor in torch on `device`: the whole buffer moves, then the same strided view of it
    (a fused QKV view stays a strided view, on the device too)."""
    import torch

    t = torch.from_numpy(flat.copy())
    if dtype == "bf16":
        t = t.view(torch.bfloat16)
    if device is not None:
        t = t.to(device)
    return torch.as_strided(t, shape, strides)
