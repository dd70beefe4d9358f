"""``InputSpec(shape, dtype, name)``: what a traced input looks like; None/-1 dims are symbolic.

Unnamed symbolic dims get conventional names so that inputs agree on them: dim 0 is the batch
``N`` (shared by every input), a 4-D input's dims 2 and 3 are ``H`` and ``W``, a 3-D input's dim 1
is the sequence length ``L``; any other is ``<input>_<axis>``. A string dim names the symbol
explicitly (two inputs with ``'L'`` must then have the same length).
"""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.dtype import convert_dtype
from ..errors import ConfigError, ShapeError
from .trace import InputSignature


class InputSpec:
    """Paddle's ``paddle.static.InputSpec``: shape (ints, None/-1 or symbol names), dtype, name."""

    def __init__(self, shape, dtype="float32", name: str | None = None, stop_gradient: bool = False) -> None:
        if isinstance(shape, int):
            shape = [shape]
        self.shape = tuple(None if d is None or (isinstance(d, int) and d == -1) else d for d in shape)
        for d in self.shape:
            if not (d is None or isinstance(d, str) or (isinstance(d, int) and d >= 0)):
                raise ValueError(
                    f"InputSpec: dims must be non-negative ints, None/-1 or symbol names, got {list(shape)}"
                )
        self.dtype = np.dtype(convert_dtype(dtype))
        self.name = name
        self.stop_gradient = stop_gradient

    @classmethod
    def from_tensor(cls, tensor, name: str | None = None) -> InputSpec:
        return cls(list(tensor.shape), tensor.dtype, name)

    def signature(self, index: int) -> InputSignature:
        """The tracer's view: a feed name and the shape with every symbolic dim named."""
        name = self.name or ("x" if index == 0 else f"x{index}")
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
        rank = len(self.shape)
        dims = []
        for axis, d in enumerate(self.shape):
            if isinstance(d, str):
                dims.append(symbolic.check_name(d))
            elif d is None:
                dims.append(_default_symbol(name, axis, rank))
            else:
                dims.append(int(d))
        return InputSignature(name, tuple(dims), self.dtype)

    def batch(self, batch_size) -> InputSpec:
        """Prepend a batch dim of ``batch_size`` (an int, or a list of one) in place; returns self."""
        size = batch_size[0] if isinstance(batch_size, list | tuple) and len(batch_size) == 1 else batch_size
        if isinstance(size, bool) or not isinstance(size, int | type(None)):
            raise ConfigError(f"InputSpec.batch: batch_size must be an int (or a list of one), got {batch_size!r}")
        self.shape = (None if size is None or size == -1 else size, *self.shape)
        return self

    def unbatch(self) -> InputSpec:
        """Drop the leading (batch) dim in place; returns self."""
        if not self.shape:
            raise ShapeError("InputSpec.unbatch: a 0-d InputSpec has no batch dim")
        self.shape = self.shape[1:]
        return self

    def __repr__(self) -> str:
        dims = tuple(-1 if d is None else d for d in self.shape)  # Paddle's form: unknown dims as -1
        return f"InputSpec(shape={dims}, dtype=paddle.{self.dtype.name}, name={self.name}, stop_gradient={self.stop_gradient})"

    def __eq__(self, other) -> bool:
        return isinstance(other, InputSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    __hash__ = None


def _default_symbol(name: str, axis: int, rank: int) -> str:
    if axis == 0:
        return "N"
    if rank == 4 and axis in (2, 3):
        return "HW"[axis - 2]
    if rank == 3 and axis == 1:
        return "L"
    return f"{name}_{axis}"


def signatures(specs) -> list[InputSignature]:
    """Signatures for a list of InputSpecs (or Tensors/arrays, taken as fixed shapes)."""
    out = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, InputSpec):
            array = np.asarray(spec._data if hasattr(spec, "_data") else spec)
            spec = InputSpec(list(array.shape), array.dtype)
        out.append(spec.signature(i))
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ValueError(f"InputSpec: input names must be unique, got {names}; give each InputSpec a distinct name")
    return out
