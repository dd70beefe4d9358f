"""``paddle.device``: paddlectl computes on the CPU only, so every other device is a clear error.

Scripts written for GPUs call ``set_device('gpu')`` or build ``CUDAPlace(0)``; both raise a
ValueError naming the fix instead of silently running somewhere the user did not ask for.
"""

from __future__ import annotations

from . import cuda

__all__ = [
    "CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "XPUPlace", "IPUPlace", "CustomPlace", "set_device", "get_device",
    "get_all_device_type", "get_available_device", "is_compiled_with_cuda", "is_compiled_with_xpu",
    "is_compiled_with_rocm", "is_compiled_with_ipu", "is_compiled_with_cinn", "is_compiled_with_custom_device",
    "is_compiled_with_distribute", "cuda",
]  # fmt: skip

_ACCELERATORS = ("gpu", "cuda", "xpu", "npu", "ipu", "mlu", "custom_cpu", "dcu")


def _unsupported(what: str) -> ValueError:
    return ValueError(
        f"{what}: paddlectl runs on the CPU only (no CUDA/XPU/IPU build); "
        "use paddle.set_device('cpu') or drop the device argument"
    )


class CPUPlace:
    """The one place tensors live (``paddle.CPUPlace()``)."""

    def __repr__(self) -> str:
        return "Place(cpu)"

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, CPUPlace) or other == "Place(cpu)" or other == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")

    def is_cpu_place(self) -> bool:
        return True

    def is_gpu_place(self) -> bool:
        return False


def _accelerator_place(name: str):
    class _Place:
        def __init__(self, *args, **kwargs) -> None:
            raise _unsupported(f"paddle.{name}()")

    _Place.__name__ = _Place.__qualname__ = name
    _Place.__doc__ = f"``paddle.{name}``: constructing it raises, since paddlectl has no such device."
    return _Place


CUDAPlace = _accelerator_place("CUDAPlace")
CUDAPinnedPlace = _accelerator_place("CUDAPinnedPlace")
XPUPlace = _accelerator_place("XPUPlace")
IPUPlace = _accelerator_place("IPUPlace")
CustomPlace = _accelerator_place("CustomPlace")


def set_device(device) -> CPUPlace:
    """Accept ``'cpu'`` (or a CPUPlace) and return the place; any accelerator raises with the fix."""
    if isinstance(device, CPUPlace):
        return device
    if not isinstance(device, str):
        raise TypeError(f"set_device: expected a device string such as 'cpu', got {type(device).__name__}")
    kind = device.strip().lower().split(":")[0]
    if kind == "cpu":
        return CPUPlace()
    if kind in _ACCELERATORS:
        raise _unsupported(f"set_device({device!r})")
    raise ValueError(f"set_device: unknown device {device!r}; the only device paddlectl has is 'cpu'")


def get_device() -> str:
    return "cpu"


def get_all_device_type() -> list[str]:
    return ["cpu"]


def get_available_device() -> list[str]:
    return ["cpu"]


def _false() -> bool:
    return False


is_compiled_with_cuda = is_compiled_with_xpu = is_compiled_with_rocm = is_compiled_with_ipu = _false
is_compiled_with_cinn = is_compiled_with_distribute = _false


def is_compiled_with_custom_device(device_type: str = "") -> bool:
    return False
