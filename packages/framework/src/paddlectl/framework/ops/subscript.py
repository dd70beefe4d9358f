"""Tensor ``__getitem__``/``__setitem__``: Python subscripts (ints, slices, None, Ellipsis, bool
and integer tensors) as ``getitem``/``set_value`` ops, whose gradients are scatter-adds and gathers.
"""

from __future__ import annotations

import numpy as np

from ..core import items as item_rules
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..kernels.index import scatter_add_axis
from ._util import constant
from .broadcast import sum_to
from .elementwise import cast
from .index import NNZ, IndexOutOfRangeError, _grad_infer, _scatter_add
from .inplace import rebind
from .shape import reshape

# ----- Tensor __getitem__ / __setitem__ ------------------------------------------------------
# An index is encoded as plain attrs (ints, slices as tuples, None, Ellipsis) plus tensor inputs
# for the array parts, so tracing records it like any op.


def _encode(op: str, x: Tensor, index) -> tuple[tuple, list[Tensor]]:
    items = index if isinstance(index, tuple) else (index,)
    spec, tensors = [], []
    for item in items:
        if item is None:
            spec.append(("none",))
        elif item is Ellipsis:
            spec.append(("ellipsis",))
        elif isinstance(item, slice):
            parts = tuple(None if p is None else int(p) for p in (item.start, item.stop, item.step))
            if parts[2] == 0:
                raise ShapeError(f"{op}: slice step cannot be zero (index {index!r} on x{x.shape})")
            spec.append(("slice",) + parts)
        elif isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_):
            spec.append(("int", int(item)))
        else:
            t = item if isinstance(item, Tensor) else constant(item)
            if t.size == 0 and t.dtype.kind == "f":
                t = t.astype("int64")  # x[[]] selects nothing
            if t.dtype.kind not in "biu":
                raise DTypeError(f"{op}: an index must be int, slice, None, ..., or an int/bool tensor; got {t.dtype}")
            spec.append(("tensor", len(tensors)))
            tensors.append(t)
    return tuple(spec), tensors


def _decode(spec: tuple, arrays) -> tuple:
    out = []
    for item in spec:
        kind = item[0]
        if kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind == "slice":
            out.append(slice(*item[1:]))
        elif kind == "int":
            out.append(item[1])
        else:
            out.append(arrays[item[1]])
    return tuple(out)


def _single_axis_index(spec: tuple, key: tuple) -> int | None:
    """The axis of ``x[:, ..., idx]`` (one 1-D int array after full slices), which has a fast kernel."""
    for axis, item in enumerate(spec):
        if item[0] == "tensor":
            index = key[axis]
            rest_full = all(s == ("slice", None, None, None) for s in spec[axis + 1 :])
            return axis if index.ndim == 1 and index.dtype.kind in "iu" and rest_full else None
        if item != ("slice", None, None, None):
            return None
    return None


def _is_basic(spec: tuple) -> bool:
    return all(item[0] != "tensor" for item in spec)


def _check_rank(op: str, x: Tensor, spec: tuple, tensors: list) -> None:
    dims = sum(1 for s in spec if s[0] in ("int", "slice"))
    dims += sum(tensors[s[1]].ndim if tensors[s[1]].dtype == np.bool_ else 1 for s in spec if s[0] == "tensor")
    if dims > x.ndim:
        raise IndexOutOfRangeError(f"{op}: too many indices for x{x.shape}: {dims} dims indexed, it has {x.ndim}")


def _indexed(op: str, x: Tensor, index, call):
    """Encode ``index``, run ``call(spec, tensors)``, and turn NumPy's index errors into typed ones."""
    spec, tensors = _encode(op, x, index)
    _check_rank(op, x, spec, tensors)
    try:
        return call(spec, tensors)
    except IndexError as exc:
        if isinstance(exc, IndexOutOfRangeError):
            raise
        raise IndexOutOfRangeError(f"{op}: {exc} (x{x.shape})") from None


def _getitem_forward(ctx, x, *arrays, spec):
    return np.asarray(x[_decode(spec, arrays)])


def _getitem_grad_forward(ctx, g, like, *arrays, spec):
    shape = like.shape
    key = _decode(spec, arrays)
    axis = _single_axis_index(spec, key)
    if _is_basic(spec):
        out = np.zeros(shape, dtype=g.dtype)
        out[key] = g
        return out
    if axis is not None:
        return scatter_add_axis(shape, axis, key[axis], g)
    return _scatter_add(shape, key, g)


def _index_inputs(ctx, first: int) -> list:
    """The index tensors an indexing op read after its ``first`` data inputs (constants)."""
    return [ctx.input(i) for i in range(first, len(ctx.needs_input_grad))]


def _getitem_grad_vjp(ctx, gg):
    indices = _index_inputs(ctx, 2)
    return (getitem_op(gg, *indices, spec=ctx.attrs["spec"]), None) + (None,) * len(indices)


# x[1:, ::-2], x[:, [2, 0, 2]] (the fast scatter kernel), x[[0, 2], None, 1] (np.add.at). Not x[mask]:
# the indexed region's size is the mask's count, which no traced shape carries (masked_select's
# record says so); tests/test_index_ops.py and test_shape_index_higher_order.py check masks.
_GETITEM_CASES = (
    ((4, 3), (("slice", 1, None, None), ("slice", None, None, -2)), ()),
    ((2, 3), (("slice", None, None, None), ("tensor", 0)), ([2, 0, 2],)),
    ((3, 2), (("tensor", 0), ("none",), ("int", 1)), ([0, 2, 0],)),
)


def _getitem_samples(rng, grad: bool = False):
    samples = []
    for shape, spec, indices in _GETITEM_CASES:
        x = rng.standard_normal(shape)
        arrays = tuple(np.asarray(i) for i in indices)
        if grad:
            samples.append(Sample((rng.standard_normal(x[_decode(spec, arrays)].shape), x, *arrays), {"spec": spec}))
        else:
            samples.append(Sample((x, *arrays), {"spec": spec}))
    return samples


getitem_grad_op = OpDef(
    "getitem_grad",
    _getitem_grad_forward,
    _getitem_grad_vjp,
    _grad_infer,
    OPAQUE,
    samples=lambda rng: _getitem_samples(rng, grad=True),
)
"""The transpose of ``getitem``: ``g`` added into zeros of ``shape`` at the index (duplicates accumulate)."""


def _getitem_vjp(ctx, g):
    indices = _index_inputs(ctx, 1)
    grad = getitem_grad_op(g, ctx.input(0), *indices, spec=ctx.attrs["spec"])
    return (grad,) + (None,) * len(indices)


class _Symbols:
    """Stand-in sizes for symbolic dims, so NumPy can compute an indexed shape; mapped back after."""

    BASE = 7919

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def concrete(self, shape) -> list[int]:
        return [d if isinstance(d, int) else self.size_of(d) for d in shape]

    def size_of(self, name: str) -> int:
        for size, known in self.names.items():
            if known == name:
                return size
        size = self.BASE + len(self.names)
        self.names[size] = name
        return size

    def restore(self, shape) -> tuple:
        return tuple(self.names.get(d, d) for d in shape)


def _spec_shape(x: Spec, indices: tuple, spec: tuple) -> tuple:
    """The indexed shape from specs: a boolean mask of rank m reads as m index arrays of ``nnz`` entries."""
    symbols = _Symbols()
    arrays = []
    for t in indices:
        if np.dtype(t.dtype) == np.bool_:
            arrays.append(("mask", len(t.shape)))
        else:
            arrays.append(np.zeros(symbols.concrete(t.shape), dtype=np.int64))
    key = []
    for item in _decode(spec, arrays):
        if isinstance(item, tuple) and item and item[0] == "mask":
            key += [np.zeros(symbols.size_of(NNZ), dtype=np.int64)] * item[1]
        else:
            key.append(item)
    dummy = np.broadcast_to(np.empty((), dtype=np.int8), symbols.concrete(x.shape))
    return symbols.restore(dummy[tuple(key)].shape)


def _getitem_infer(x: Spec, *indices: Spec, spec) -> Spec:
    return Spec(_spec_shape(x, indices, spec), x.dtype)


getitem_op = OpDef(
    "getitem",
    _getitem_forward,
    _getitem_vjp,
    _getitem_infer,
    OPAQUE,
    samples=_getitem_samples,
    items=item_rules.sliced,
)


def __getitem__(self, index):  # noqa: N807 - installed as Tensor.__getitem__
    """NumPy/Paddle indexing: ints, slices (any step), None, ..., int and bool tensors, mixed."""
    return _indexed("getitem", self, index, lambda spec, tensors: getitem_op(self, *tensors, spec=spec))


def _setitem_forward(ctx, x, value, *arrays, spec):
    key = _decode(spec, arrays)
    out = x.copy()
    try:
        out[key] = value
    except ValueError:
        raise ShapeError(
            f"setitem: value{list(value.shape)} cannot be broadcast to the indexed region {list(out[key].shape)} "
            f"of x{list(x.shape)}"
        ) from None
    return out


def _last_write_forward(ctx, like, *arrays, spec):
    key = _decode(spec, arrays)
    last = np.full(like.shape, -1, dtype=np.int64)
    region = last[key].shape
    ids = np.arange(int(np.prod(region))).reshape(region)
    last[key] = ids
    return (last[key] == ids).astype(like.dtype)


last_write_op = OpDef(
    "last_write",
    _last_write_forward,
    None,
    lambda like, *indices, spec: Spec(_spec_shape(like, indices, spec), like.dtype),
    OPAQUE,
    samples=lambda rng: [Sample(s.inputs[1:], s.attrs) for s in _getitem_samples(rng, grad=True)],
)
"""Over the region ``like[index]``: 1 where that entry is the last write to its position, else 0
(an op on the index, so a traced backward recomputes it for the indices it is given)."""


def _setitem_vjp(ctx, g):
    spec = ctx.attrs["spec"]
    indices = _index_inputs(ctx, 2)
    gx = gv = None
    if ctx.needs_input_grad[0]:
        gx = set_value_op(g, constant(np.zeros((), dtype=g.dtype)), *indices, spec=spec)  # zero where written
    if ctx.needs_input_grad[1]:
        gv = getitem_op(g, *indices, spec=spec)
        if not _is_basic(spec):  # duplicate positions keep the last write: only its value gets the gradient
            gv = gv * last_write_op(g, *indices, spec=spec)
        value_shape = ctx.input(1).shape
        gv = sum_to(gv, value_shape) if gv.ndim >= len(value_shape) else reshape(gv, value_shape)
    return (gx, gv) + (None,) * len(indices)


def _set_value_samples(rng):
    samples = []
    for sample in _getitem_samples(rng):
        x, *indices = sample.inputs
        region = x[_decode(sample.attrs["spec"], indices)].shape
        value = rng.standard_normal((1, *region[1:]))  # broadcast over the region's first dim
        samples.append(Sample((x, value, *indices), sample.attrs))
    return samples


set_value_op = OpDef(
    "set_value",
    _setitem_forward,
    _setitem_vjp,
    lambda x, value, *indices, spec: x,
    OPAQUE,
    samples=_set_value_samples,
)


def __setitem__(self, index, value):  # noqa: N807 - installed as Tensor.__setitem__
    """``x[index] = value`` as a recorded op: x's data and graph node are rebound to the result, so
    gradients reach the old x (zero where written) and the value (summed to its shape)."""
    if STATE.grad_enabled and self._node is None and not self.stop_gradient:
        raise ValueError(
            f"setitem: {self.name or 'tensor'}{self.shape} is a leaf tensor that requires a gradient, and Paddle "
            "forbids in-place writes to it; write under paddle.no_grad(), or into a copy (x = x.clone())"
        )
    value = value if isinstance(value, Tensor) else constant(value, self.dtype)
    if value.dtype != self.dtype:
        value = cast(value, self.dtype)

    def write(before):
        return _indexed(
            "setitem", before, index, lambda spec, tensors: set_value_op(before, value, *tensors, spec=spec)
        )

    rebind(self, "setitem", write)


TENSOR_METHODS = ["__getitem__", "__setitem__"]
