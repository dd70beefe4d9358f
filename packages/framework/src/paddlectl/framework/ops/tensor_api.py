"""Tensor facts and conversions scripts call everywhere: is_tensor, numel, shape, assign, ``.to``,
``.cpu``/``.cuda``, ``.T``/``.mT``, ``view``, ``new_*``, ``element_size`` and dtype shortcuts."""

from __future__ import annotations

import numpy as np

from .. import modes
from ..core.dtype import convert_dtype
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.tensor import Tensor
from ..device import CPUPlace, set_device
from ..errors import DTypeError, ShapeError
from . import creation
from ._util import constant
from .inplace import overwrite
from .shape import reshape, transpose


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def numel(x, name=None) -> Tensor:
    """The element count as a 0-D int64 tensor (Paddle's ``paddle.numel``)."""
    return constant(x.size, np.int64)


def shape(input) -> Tensor:  # noqa: A002 - Paddle's name
    """The shape as a 1-D int64 tensor."""
    return constant(input.shape, np.int64)


def assign(x, output=None) -> Tensor:
    """A copy of ``x`` (differentiable for float tensors); arrays and lists become new tensors.
    With ``output`` the copy's value is written into that tensor, which is returned."""
    if isinstance(x, Tensor):
        result = x.clone()
    else:
        array = np.array(x, copy=True)
        if array.dtype.kind in "OUS":
            raise DTypeError(f"assign: cannot make a tensor from {type(x).__name__} holding {array.dtype} values")
        result = constant(array)
    if output is None:
        return result
    if list(result.shape) != output.shape:
        raise ShapeError(f"assign: x has shape {result.shape}, output has shape {output.shape}; they must match")
    return overwrite(output, result)  # a constant value leaves output's stop_gradient (a parameter stays trainable)


# ----- Tensor methods -------------------------------------------------------------------------


def _device_error(what: str) -> ValueError:
    return ValueError(f"Tensor.{what}: paddlectl runs on the CPU only; drop the call or use .cpu()")


def cpu(self) -> Tensor:
    return self


def cuda(self, device_id=None, blocking=True) -> Tensor:
    if modes.recording() is not None:
        return self  # a static program's variable has no device of its own (Paddle's Variable.cuda)
    raise _device_error("cuda()")


def _is_device(arg) -> bool:
    if isinstance(arg, CPUPlace):
        return True
    if isinstance(arg, str):
        kind = arg.strip().lower().split(":")[0]
        return kind in ("cpu", "gpu", "cuda", "xpu", "npu", "ipu")
    return False


def to(self, *args, **kwargs) -> Tensor:
    """``x.to(device)``, ``x.to(dtype)``, ``x.to(device, dtype)`` or ``x.to(other_tensor)``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("blocking", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"Tensor.to: unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif _is_device(arg):
            device = arg
        elif isinstance(arg, bool):
            continue  # blocking
        else:
            dtype = arg
    if device is not None:
        set_device(device)
    return self if dtype is None else self.astype(dtype)


def _matrix_transpose(self, op: str) -> Tensor:
    if self.ndim < 2:
        raise ShapeError(f"Tensor.{op}: needs a tensor of rank >= 2, got shape {self.shape}")
    perm = list(range(self.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(self, perm)


def _T(self) -> Tensor:  # noqa: N802 - Paddle's property name
    """All dims reversed (Paddle's ``Tensor.T``)."""
    return self if self.ndim < 2 else transpose(self, list(range(self.ndim))[::-1])


def _mT(self) -> Tensor:  # noqa: N802
    return _matrix_transpose(self, "mT")


def contiguous(self) -> Tensor:
    return self


def is_contiguous(self) -> bool:
    return True


def _view_dtype_forward(ctx, x, dtype):
    try:
        return np.ascontiguousarray(x).view(dtype)
    except ValueError as exc:
        raise ShapeError(f"view: cannot view {x.dtype.name}{list(x.shape)} as {dtype}: {exc}") from None


def _view_dtype_infer(x: Spec, dtype) -> Spec:
    old, new = np.dtype(x.dtype), np.dtype(dtype)
    if old.itemsize == new.itemsize:
        return Spec(x.shape, new)
    if not x.shape or not isinstance(x.shape[-1], int):
        raise ShapeError(f"view: viewing {old.name} as {new.name} needs a fixed last dim, got {list(x.shape)}")
    return Spec((*x.shape[:-1], x.shape[-1] * old.itemsize // new.itemsize), new)


view_dtype_op = OpDef(
    "view_dtype",
    _view_dtype_forward,
    None,
    _view_dtype_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((2, 4)),), {"dtype": "int64"}),
        Sample((rng.standard_normal((2, 3)),), {"dtype": "float32"}),
    ],
)
"""The bytes of x reinterpreted as another dtype (the last dim rescaled), sharing memory."""


def view(x, shape_or_dtype, name=None) -> Tensor:
    """Reshape semantics for a shape; a dtype reinterprets the bytes (last dim rescaled)."""
    if isinstance(shape_or_dtype, list | tuple | Tensor):
        return reshape(x, shape_or_dtype)
    dtype = convert_dtype(shape_or_dtype)
    return view_dtype_op(x, dtype=dtype.name)


def view_as(x, other, name=None) -> Tensor:
    return reshape(x, other.shape)


def _new(fill, valued=False):
    def method(self, size, *args, dtype=None, device=None, requires_grad=False, pin_memory=False):
        if args and not valued:  # sizes as separate ints: x.new_ones(3, 3)
            size, args = (size, *args), ()
        out = fill(self, creation._shape(size), *args, dtype=convert_dtype(dtype) if dtype else self.dtype)
        out.stop_gradient = not requires_grad
        return out

    return method


new_full = _new(lambda self, shape, value, dtype: creation.full(shape, value, dtype), valued=True)
new_zeros = _new(lambda self, shape, dtype: creation.zeros(shape, dtype))
new_ones = _new(lambda self, shape, dtype: creation.ones(shape, dtype))
new_empty = _new(lambda self, shape, dtype: creation.empty(shape, dtype))


def element_size(self) -> int:
    return self.dtype.itemsize


def _as(dtype: str):
    def method(self) -> Tensor:
        return self.astype(dtype)

    method.__name__ = dtype
    method.__doc__ = f"This tensor as {dtype} (a differentiable cast for floats)."
    return method


def type_as(self, other) -> Tensor:
    return self.astype(other.dtype)


def _install() -> None:
    Tensor.T = property(_T)
    Tensor.mT = property(_mT)
    Tensor.itemsize = property(element_size)
    for method, dtype in {
        "float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
        "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
    }.items():  # fmt: skip
        setattr(Tensor, method, _as(dtype))


_install()

TENSOR_METHODS = [
    "cpu", "cuda", "to", "contiguous", "is_contiguous", "view", "view_as", "new_full", "new_zeros", "new_ones",
    "new_empty", "element_size", "type_as",
]  # fmt: skip
TOP_LEVEL = ["view", "view_as"]
