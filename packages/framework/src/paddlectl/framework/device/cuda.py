"""``paddle.device.cuda``: there are no CUDA devices, and scripts that ask get zero or a clear error."""

from __future__ import annotations


def device_count() -> int:
    return 0


def is_available() -> bool:
    return False


def _no_cuda(what: str):
    raise ValueError(f"paddle.device.cuda.{what}: paddlectl runs on the CPU only; there is no CUDA device")


def synchronize(device=None) -> None:
    """Nothing runs asynchronously on the CPU, so there is nothing to wait for."""


def empty_cache() -> None:
    """The CPU allocator has no device cache to release."""


def current_device() -> int:
    _no_cuda("current_device()")


def get_device_name(device=None) -> str:
    _no_cuda("get_device_name()")
