"""Paddle's older spellings of things Tensors already do: ``x.gradient()``, ``x.get_tensor()``,
``x.inplace_version``, ``x.device``, ``x.is_parameter``, ``Tensor.split_with_sizes``, ``paddle.tolist`` /
``paddle.clone``, and the CUDA RNG state of a CPU build (an empty list, as Paddle's CPU build
returns)."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Parameter, Tensor
from ..errors import ConfigError
from .shape import split


def gradient(self):
    """The gradient as an ndarray (None before a backward); a row-sparse one as ``(values, rows)``."""
    grad = self.grad
    if grad is None:
        return None
    if grad.is_selected_rows():
        return grad.value().numpy(), np.asarray(grad.rows(), dtype=np.int64)
    return grad.numpy()


class DenseTensorView:
    """What ``x.get_tensor()`` gives: the array behind a Tensor, printed as Paddle prints its
    ``DenseTensor``; ``np.array(view)`` reads it, ``view.set(array, place)`` writes it (a scope
    variable's view, ``static.scope``, reads and writes its variable instead)."""

    def __init__(self, tensor: Tensor | None) -> None:
        self._tensor = tensor

    def _value(self) -> np.ndarray:
        return self._tensor.numpy()

    def set(self, array, place=None) -> None:
        self._tensor.set_value(np.asarray(array))

    def shape(self) -> list[int]:
        return list(np.shape(self._value()))

    def __array__(self, dtype=None, copy=None):
        array = self._value()
        return array if dtype is None else array.astype(dtype)

    def __str__(self) -> str:
        array = self._value()
        return (
            f"  - shape: {list(array.shape)}\n  - layout: NCHW\n  - place: Place(cpu)\n"
            f"  - dtype: {array.dtype.name}\n  - data: [{' '.join(f'{v:g}' for v in array.reshape(-1))}]"
        )

    __repr__ = __str__


def get_tensor(self) -> DenseTensorView:
    return DenseTensorView(self)


def split_with_sizes(self, split_sizes, dim: int = 0):
    """``x`` split along ``dim`` into pieces of ``split_sizes`` (which must add up to its size)."""
    return split(self, list(split_sizes), axis=dim)


def tolist(x):
    return x.tolist()


def clone(x, name=None):
    return x.clone()


def get_cuda_rng_state() -> list:
    """The random states of the GPUs: none on the CPU."""
    return []


def set_cuda_rng_state(state_list) -> None:
    if list(state_list):
        raise ConfigError("set_cuda_rng_state: paddlectl runs on the CPU; there is no GPU random state to set")


def disable_signal_handler() -> None:
    """Paddle installs C++ handlers that print a stack on SIGSEGV and the like; none are installed
    here, so there is nothing to switch off."""


def _install() -> None:
    Tensor.inplace_version = property(lambda self: getattr(self, "_version", 0), doc="In-place writes so far.")
    Tensor.device = property(lambda self: "cpu", doc="Where the data lives: the CPU.")
    Tensor.is_parameter = property(lambda self: isinstance(self, Parameter), doc="Whether it is a Parameter.")


_install()

TENSOR_METHODS = ["gradient", "get_tensor", "split_with_sizes"]
TOP_LEVEL = ["tolist", "clone", "get_cuda_rng_state", "set_cuda_rng_state", "disable_signal_handler"]
