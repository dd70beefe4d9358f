"""Shape ops: reshape, transpose, squeeze/unsqueeze, flatten, concat/stack/split, tile/expand,
flip/roll, tril/triu, slice and pad."""

from __future__ import annotations

import builtins

import numpy as np

from ..core import items as item_rules
from ..core import symbolic
from ..core.lowering import lowering
from ..core.op import BROADCAST, OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from .broadcast import sum_to


def _resolve_shape(op: str, in_shape: tuple, shape) -> tuple:
    """Paddle's reshape rules: 0 copies the input's dim at that position, one -1 is inferred."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    dims = [int(d.item()) if isinstance(d, Tensor) else int(d) for d in shape]
    dims = [in_shape[i] if d == 0 and i < len(in_shape) else d for i, d in enumerate(dims)]
    if dims.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1, got {dims}")
    total = int(np.prod(in_shape))
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or total % known:
            raise ShapeError(f"{op}: cannot reshape a tensor of shape {list(in_shape)} ({total} elements) into {dims}")
        dims[dims.index(-1)] = total // known
    if int(np.prod(dims)) != total:
        raise ShapeError(f"{op}: cannot reshape a tensor of shape {list(in_shape)} ({total} elements) into {dims}")
    return tuple(dims)


def _reshape_forward(ctx, x, shape):
    return x.reshape(_resolve_shape("reshape", x.shape, shape))


def _reshape_infer(x: Spec, shape) -> Spec:
    """The target shape with 0 (copy) and -1 (inferred) resolved over dims that may be symbolic."""
    if all(isinstance(d, int) for d in x.shape):
        return Spec(_resolve_shape("reshape", tuple(x.shape), shape), x.dtype)
    dims = [x.shape[i] if d == 0 and i < len(x.shape) else d for i, d in enumerate(shape)]
    if dims.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension can be -1, got {list(shape)}")
    total = symbolic.product(x.shape)
    if -1 in dims:
        known = symbolic.product([d for d in dims if d != -1])
        rest = symbolic.divide_exact(total, known)
        if rest is None:
            raise ShapeError(f"reshape: the -1 in {list(shape)} for x{list(x.shape)} is not a whole symbolic size")
        dims[dims.index(-1)] = rest
    if symbolic.simplify(symbolic.product(dims)) != symbolic.simplify(total):
        raise ShapeError(f"reshape: cannot reshape x{list(x.shape)} into {list(shape)}: the sizes differ")
    return Spec(tuple(symbolic.simplify(d) for d in dims), x.dtype)


def _reshape_as_vjp(ctx, gg):
    return reshape_as_op(gg, ctx.input(0)), None


reshape_as_op = OpDef(
    "reshape_as",
    lambda ctx, g, like: g.reshape(like.shape),
    _reshape_as_vjp,
    lambda g, like: Spec(tuple(like.shape), g.dtype),
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal(6), rng.standard_normal((2, 3))))],
)
"""``g`` in the shape of ``like`` (read for its shape only): the vjp of every reshape-like op, which
keeps a traced backward as shape-generic as its forward (a reshape to ``x.shape`` would fix the sizes
the trace happened to see)."""


def _x(*shape):
    """One sample of a one-input op: a float64 array of ``shape`` (the sweep's gradient checks need float64)."""
    return lambda rng, **attrs: Sample((rng.standard_normal(shape),), attrs)


reshape_op = OpDef(
    "reshape",
    _reshape_forward,
    lambda ctx, g: reshape_as_op(g, ctx.input(0)),
    _reshape_infer,
    OPAQUE,
    samples=lambda rng: [_x(2, 3, 4)(rng, shape=(0, -1)), _x(6)(rng, shape=(2, 3))],
    items=item_rules.regrouped,
)


@lowering("reshape")
def _reshape_lowering(attrs, in_types, out_types):
    """At a known output shape the 0/-1 rules are resolved already: a plain C-order reshape."""
    shape = out_types[0][0]
    return lambda x: x.reshape(shape)


def reshape(x, shape, name=None):
    """Paddle's reshape; the op keeps 0 and -1 unresolved so a traced program stays shape-generic,
    and records 0 (copy) where a size equals x's dim at the same position, so ``reshape(x,
    [x.shape[0], -1])`` keeps a traced batch symbolic."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    dims = tuple(int(d.item()) if isinstance(d, Tensor) else int(d) for d in shape)
    _resolve_shape("reshape", tuple(x.shape), dims)  # eager check: errors surface at the call
    dims = tuple(0 if i < x.ndim and d > 0 and d == x.shape[i] else d for i, d in enumerate(dims))
    return reshape_op(x, shape=dims)


def _transpose_forward(ctx, x, perm):
    return np.transpose(x, perm)


def _transpose_vjp(ctx, g):
    return transpose_op(g, perm=tuple(int(p) for p in np.argsort(ctx.attrs["perm"])))


def _transpose_infer(x: Spec, perm) -> Spec:
    return Spec(tuple(x.shape[p] for p in perm), x.dtype)


transpose_op = OpDef(
    "transpose",
    _transpose_forward,
    _transpose_vjp,
    _transpose_infer,
    OPAQUE,
    samples=lambda rng: [_x(2, 3, 4)(rng, perm=(2, 0, 1)), _x(3, 4)(rng, perm=(1, 0))],
    items=item_rules.transposed,
)


def transpose(x, perm, name=None):
    perm = tuple(normalize_axis("transpose", int(p), x.ndim) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: perm {list(perm)} is not a permutation of the {x.ndim} axes of x{x.shape}")
    return transpose_op(x, perm=perm)


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    if x.ndim == 0:
        return reshape(x, [1])
    start = normalize_axis("flatten", start_axis, x.ndim)
    stop = normalize_axis("flatten", stop_axis, x.ndim)
    if start > stop:
        raise ShapeError(f"flatten: start_axis ({start_axis}) must not come after stop_axis ({stop_axis})")
    shape = x.shape
    if 0 in shape:  # an empty tensor: -1 cannot be inferred, spell every dim out
        return reshape(x, shape[:start] + [int(np.prod(shape[start : stop + 1]))] + shape[stop + 1 :])
    # 0 copies a leading dim and -1 stands for the merged one, so a traced flatten stays shape-generic
    return reshape(x, [0] * start + [-1] + shape[stop + 1 :])


def _squeeze_forward(ctx, x, axes):
    return np.squeeze(x, axis=axes)


def _squeeze_infer(x: Spec, axes) -> Spec:
    return Spec(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


squeeze_op = OpDef(
    "squeeze",
    _squeeze_forward,
    lambda ctx, g: unsqueeze_op(g, axes=ctx.attrs["axes"]),
    _squeeze_infer,
    OPAQUE,
    samples=lambda rng: [_x(2, 1, 3, 1)(rng, axes=(1, 3)), _x(1, 4)(rng, axes=())],
    items=item_rules.regrouped,
)


def squeeze(x, axis=None, name=None):
    """Drop size-1 axes (all of them, or those in ``axis``; Paddle ignores listed axes not of size 1).

    An op of its own rather than a reshape, so a traced program keeps its other dims symbolic."""
    shape = x.shape
    if axis is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = {normalize_axis("squeeze", int(a), x.ndim) for a in ([axis] if isinstance(axis, int) else axis)}
        axes = {a for a in axes if shape[a] == 1}
    return squeeze_op(x, axes=tuple(sorted(axes)))


def _unsqueeze_forward(ctx, x, axes):
    return np.expand_dims(x, axes)


def _unsqueeze_infer(x: Spec, axes) -> Spec:
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return Spec(tuple(shape), x.dtype)


unsqueeze_op = OpDef(
    "unsqueeze",
    _unsqueeze_forward,
    lambda ctx, g: squeeze_op(g, axes=ctx.attrs["axes"]),
    _unsqueeze_infer,
    OPAQUE,
    samples=lambda rng: [_x(2, 3)(rng, axes=(0, 2)), _x(3)(rng, axes=(1,))],
    items=item_rules.regrouped,
)


def unsqueeze(x, axis, name=None):
    """Insert size-1 axes one after another, as Paddle does (each axis counts in the growing rank)."""
    axes = [axis] if isinstance(axis, int) else [int(a.item()) if isinstance(a, Tensor) else int(a) for a in axis]
    layout = [False] * x.ndim
    for a in axes:
        layout.insert(normalize_axis("unsqueeze", a, len(layout) + 1), True)
    return unsqueeze_op(x, axes=tuple(i for i, new in enumerate(layout) if new))


def _concat_forward(ctx, *xs, axis):
    return np.concatenate(xs, axis=axis)


def _concat_vjp(ctx, g):
    axis = ctx.attrs["axis"]
    sections = tuple(ctx.input(i).shape[axis] for i in range(len(ctx.needs_input_grad)))
    return split_op(g, axis=axis, sections=sections)


def _concat_samples(rng):
    return [
        Sample((rng.standard_normal((2, 3)), rng.standard_normal((4, 3))), {"axis": 0}),
        Sample((rng.standard_normal((2, 1)), rng.standard_normal((2, 2)), rng.standard_normal((2, 3))), {"axis": 1}),
    ]


def _concat_infer(*xs: Spec, axis) -> Spec:
    shape = list(xs[0].shape)
    dims = [x.shape[axis] for x in xs]
    shape[axis] = sum(dims) if all(isinstance(d, int) for d in dims) else "+".join(map(str, dims))
    return Spec(tuple(shape), np.result_type(*[x.dtype for x in xs]))


concat_op = OpDef(
    "concat",
    _concat_forward,
    _concat_vjp,
    _concat_infer,
    OPAQUE,
    samples=_concat_samples,
    items=item_rules.off_axis("axis"),
)


def concat(x, axis=0, name=None):
    xs = list(x)
    if not xs:
        raise ValueError("concat: needs at least one tensor")
    axis = normalize_axis("concat", int(axis.item() if isinstance(axis, Tensor) else axis), xs[0].ndim)
    ref = xs[0].shape
    for i, t in enumerate(xs):
        if t.ndim != len(ref) or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref, strict=True)) if k != axis):
            raise ShapeError(f"concat: tensor {i} has shape {t.shape}, which differs from {ref} outside axis {axis}")
    return concat_op(*xs, axis=axis)


def stack(x, axis=0, name=None):
    xs = list(x)
    if not xs:
        raise ValueError("stack: needs at least one tensor")
    for i, t in enumerate(xs):
        if t.shape != xs[0].shape:
            raise ShapeError(f"stack: tensor {i} has shape {t.shape}, tensor 0 has {xs[0].shape}; all must match")
    axis = normalize_axis("stack", axis, xs[0].ndim + 1)
    return concat([unsqueeze(t, axis) for t in xs], axis=axis)


def _ints(value) -> list[int]:
    """A shape-like argument (ints, Tensors, a Tensor) as a list of Python ints."""
    if isinstance(value, Tensor):
        return [int(v) for v in np.asarray(value.numpy()).reshape(-1)]  # a shape is read, so tracing refuses it
    if isinstance(value, int | np.integer):
        return [int(value)]
    return [int(v.item()) if isinstance(v, Tensor) else int(v) for v in value]


def _axis_arg(axis) -> int:
    return int(axis.item()) if isinstance(axis, Tensor) else int(axis)


def _scale_dim(dim, times: int):
    """``dim * times`` for a dim that may be a symbol: the product stays symbolic."""
    if times == 1:
        return dim
    return dim * times if isinstance(dim, int) else f"{times}*{dim}"


# ----- split / chunk / unbind ----------------------------------------------------------------


def _split_forward(ctx, x, axis, sections):
    return tuple(np.split(x, np.cumsum(sections)[:-1], axis=axis))


def _split_vjp(ctx, *grads):
    return concat_op(*grads, axis=ctx.attrs["axis"])


def _split_infer(x: Spec, axis, sections) -> tuple:
    return tuple(Spec(x.shape[:axis] + (s,) + x.shape[axis + 1 :], x.dtype) for s in sections)


split_op = OpDef(
    "split",
    _split_forward,
    _split_vjp,
    _split_infer,
    OPAQUE,
    samples=lambda rng: [_x(5, 3)(rng, axis=0, sections=(2, 3)), _x(2, 6)(rng, axis=1, sections=(2, 2, 2))],
    items=item_rules.off_axis("axis"),
)


def _sections(op: str, x: Tensor, num_or_sections, axis: int) -> tuple:
    size = x.shape[axis]
    if isinstance(num_or_sections, int | np.integer):
        n = int(num_or_sections)
        if n <= 0 or size % n:
            raise ShapeError(
                f"{op}: axis {axis} of x{x.shape} has size {size}, which does not split evenly into {n} parts; "
                "pass a list of section sizes instead"
            )
        return (size // n,) * n
    sections = _ints(num_or_sections)
    if sections.count(-1) > 1:
        raise ShapeError(f"{op}: only one section can be -1, got {sections} for x{x.shape}")
    if -1 in sections:
        sections[sections.index(-1)] = size - sum(s for s in sections if s != -1)
    if any(s < 0 for s in sections) or sum(sections) != size:
        raise ShapeError(f"{op}: sections {sections} do not add up to size {size} of axis {axis} of x{x.shape}")
    return tuple(sections)


def split(x, num_or_sections, axis=0, name=None):
    axis = normalize_axis("split", _axis_arg(axis), x.ndim)
    return list(split_op(x, axis=axis, sections=_sections("split", x, num_or_sections, axis)))


def chunk(x, chunks, axis=0, name=None):
    return split(x, int(chunks), axis)


def unbind(input, axis=0):  # noqa: A002 - Paddle's name
    axis = normalize_axis("unbind", _axis_arg(axis), input.ndim)
    if input.shape[axis] == 0:
        return []
    return [squeeze_op(part, axes=(axis,)) for part in split(input, input.shape[axis], axis)]


# ----- tile / expand -------------------------------------------------------------------------


def _tile_forward(ctx, x, reps):
    return np.tile(x, reps)


def _tile_vjp(ctx, g):
    """Each output dim ``r*d`` split into ``(r, d)``, the copies summed away (``sum_to`` to ``(1, d)``)."""
    x = ctx.input(0)
    shape, reps = x.shape, ctx.attrs["reps"]
    if 0 in reps or 0 in shape:
        return reshape_as_op(g, x)
    pairs = [n for r, d in zip(reps, shape, strict=True) for n in (r, d)]
    ones = [n for d in shape for n in (1, d)]
    return reshape_as_op(sum_to(reshape(g, pairs), ones), x)


def _tile_infer(x: Spec, reps) -> Spec:
    shape = (1,) * (len(reps) - len(x.shape)) + tuple(x.shape)
    return Spec(tuple(_scale_dim(d, r) for d, r in zip(shape, reps, strict=True)), x.dtype)


tile_op = OpDef(
    "tile",
    _tile_forward,
    _tile_vjp,
    _tile_infer,
    OPAQUE,
    samples=lambda rng: [_x(2, 3)(rng, reps=(2, 3)), _x(1, 3)(rng, reps=(3, 1))],
)


def tile(x, repeat_times, name=None):
    reps = _ints(repeat_times)
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile: repeat_times must be non-negative, got {reps} for x{x.shape}")
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + tuple(reps)
    if x.ndim < ndim:
        x = reshape(x, [1] * (ndim - x.ndim) + x.shape)
    return tile_op(x, reps=reps)


def _expanded(x_shape: tuple, shape) -> tuple:
    """``shape`` with each -1 (keep x's dim, aligned from the right) resolved; dims may be symbolic."""
    lead = len(shape) - len(x_shape)
    return tuple(x_shape[i - lead] if d == -1 else d for i, d in enumerate(shape))


def _expand_forward(ctx, x, shape):
    return np.array(np.broadcast_to(x, _expanded(x.shape, shape)))


def _expand_infer(x: Spec, shape) -> Spec:
    return Spec(_expanded(tuple(x.shape), shape), x.dtype)


expand_op = OpDef(
    "expand",
    _expand_forward,
    lambda ctx, g: sum_to(g, ctx.input(0)),
    _expand_infer,
    BROADCAST,
    samples=lambda rng: [_x(3, 1)(rng, shape=(2, -1, 4)), _x(4)(rng, shape=(3, -1))],
    exempt={"compile": "a copy with no scalar expression: fusion leaves it as the broadcast feeding a group"},
)


def expand(x, shape, name=None):
    """Broadcast ``x`` to ``shape`` (-1 keeps x's dim). The op records -1 wherever x's dim is kept,
    also where it was given as a size (``x.shape[0]``), so a traced batch dim stays symbolic."""
    target = _ints(shape)
    lead = len(target) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: shape {target} has fewer dims than x{x.shape}; give at least {x.ndim} dims")
    out = []
    for i, d in enumerate(target):
        have = x.shape[i - lead] if i >= lead else None
        if d == -1:
            if have is None:
                raise ShapeError(f"expand: -1 in shape {target} at new leading dim {i} of x{x.shape} has no size")
            d = have
        if have is not None and have != 1 and have != d:
            raise ShapeError(f"expand: cannot expand x{x.shape} to {target}: dim {i} is {have}, not 1 or {d}")
        out.append(-1 if d == have else d)
    return expand_op(x, shape=tuple(out))


def broadcast_to(x, shape, name=None):
    return expand(x, shape)


def expand_as(x, y, name=None):
    return expand(x, y.shape)


# ----- flip / roll / tril / triu -------------------------------------------------------------

flip_op = OpDef(
    "flip",
    lambda ctx, x, axis: np.flip(x, axis).copy(),
    lambda ctx, g: flip_op(g, axis=ctx.attrs["axis"]),
    lambda x, axis: x,
    OPAQUE,
    samples=lambda rng: [_x(3, 4)(rng, axis=(1,)), _x(2, 3, 4)(rng, axis=(0, 2))],
)


def flip(x, axis, name=None):
    axes = tuple(sorted({normalize_axis("flip", a, x.ndim) for a in _ints(axis)}))
    return flip_op(x, axis=axes)


def _roll_forward(ctx, x, shifts, axis):
    if axis is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, axis)


def _roll_vjp(ctx, g):
    return roll_op(g, shifts=tuple(-s for s in ctx.attrs["shifts"]), axis=ctx.attrs["axis"])


roll_op = OpDef(
    "roll",
    _roll_forward,
    _roll_vjp,
    lambda x, shifts, axis: x,
    OPAQUE,
    samples=lambda rng: [_x(3, 4)(rng, shifts=(1, -2), axis=(0, 1)), _x(3, 4)(rng, shifts=(5,), axis=None)],
)


def roll(x, shifts, axis=None, name=None):
    shifts = tuple(_ints(shifts))
    if axis is None:
        if len(shifts) != 1:
            raise ShapeError(f"roll: without axis, shifts must be one number, got {list(shifts)} for x{x.shape}")
        return roll_op(x, shifts=shifts, axis=None)
    axes = tuple(normalize_axis("roll", a, x.ndim) for a in _ints(axis))
    if len(axes) != len(shifts):
        raise ShapeError(f"roll: shifts {list(shifts)} and axis {list(axes)} must have the same length (x{x.shape})")
    return roll_op(x, shifts=shifts, axis=axes)


def _triangle(name: str, fn):
    def infer(x: Spec, diagonal) -> Spec:
        return x

    op = OpDef(
        name,
        lambda ctx, x, diagonal: fn(x, diagonal),
        lambda ctx, g: op(g, diagonal=ctx.attrs["diagonal"]),
        infer,
        samples=lambda rng: [_x(4, 3)(rng, diagonal=0), _x(2, 3, 5)(rng, diagonal=-1), _x(3, 3)(rng, diagonal=1)],
    )

    def public(x, diagonal=0, name=None, *, out=None):
        if x.ndim < 2:
            raise ShapeError(f"{op.name}: x must have at least 2 dims, got x{x.shape}")
        return op(x, diagonal=int(diagonal))

    public.__name__ = name
    public.__doc__ = (
        f"``paddle.{name}``: keep the {'lower' if name == 'tril' else 'upper'} triangle of the last two dims."
    )
    return public


tril = _triangle("tril", np.tril)
triu = _triangle("triu", np.triu)

# ----- slice ---------------------------------------------------------------------------------


def _strided_forward(ctx, x, index):
    return x[tuple(builtins.slice(*s) for s in index)]


def _like_grad_infer(g: Spec, like: Spec, **attrs) -> Spec:
    """A backward op's output: shaped as ``like`` (the primary op's input, read for its shape only, so
    a traced backward keeps its symbolic dims), in the gradient's dtype."""
    return Spec(tuple(like.shape), g.dtype)


def _g_like(rng, g_shape, like_shape, **attrs) -> Sample:
    return Sample((rng.standard_normal(g_shape), rng.standard_normal(like_shape)), attrs)


def _strided_grad_forward(ctx, g, like, index):
    out = np.zeros(like.shape, dtype=g.dtype)
    out[tuple(builtins.slice(*s) for s in index)] = g
    return out


strided_slice_grad_op = OpDef(
    "strided_slice_grad",
    _strided_grad_forward,
    lambda ctx, g: (strided_slice_op(g, index=ctx.attrs["index"]), None),
    _like_grad_infer,
    OPAQUE,
    samples=lambda rng: [_g_like(rng, (2, 2), (5, 3), index=((1, None, 2), (None, None, -2)))],
)
"""The transpose of ``strided_slice``: ``g`` written at ``index`` into zeros shaped as ``like``."""


def _strided_vjp(ctx, g):
    return strided_slice_grad_op(g, ctx.input(0), index=ctx.attrs["index"])


def _strided_infer(x: Spec, index) -> Spec:
    shape = []
    for d, (start, stop, step) in zip(x.shape, index, strict=False):
        whole = start in (None, 0) and stop is None and step in (None, 1)
        shape.append(
            d if whole or not isinstance(d, int) else len(range(*builtins.slice(start, stop, step).indices(d)))
        )
    return Spec(tuple(shape) + tuple(x.shape[len(index) :]), x.dtype)


strided_slice_op = OpDef(
    "strided_slice",
    _strided_forward,
    _strided_vjp,
    _strided_infer,
    OPAQUE,
    samples=lambda rng: [
        _x(5, 3)(rng, index=((1, None, 2), (None, None, -2))),
        _x(4, 3, 2)(rng, index=((None, None, None), (0, 2, 1))),
    ],
    items=item_rules.whole_along_batch,
)
"""``index`` is one ``(start, stop, step)`` per leading axis, Python slice semantics."""


@lowering("strided_slice")
def _strided_lowering(attrs, in_types, out_types):
    """The view alone, its slices made once (the projections ``fuse_attention`` merges are read
    back through three of these per attention)."""
    index = tuple(builtins.slice(*s) for s in attrs["index"])
    return lambda x: x[index]


def strided_slice(x, axes, starts, ends, strides, name=None):
    index = [(None, None, None)] * x.ndim
    for a, s, e, st in zip(_ints(axes), _ints(starts), _ints(ends), _ints(strides), strict=True):
        a = normalize_axis("strided_slice", a, x.ndim)
        if st == 0:
            raise ShapeError(f"strided_slice: stride 0 on axis {a} of x{x.shape}")
        index[a] = (s, e, st)
    return strided_slice_op(x, index=tuple(index))


def slice(input, axes, starts, ends):  # noqa: A001,A002 - Paddle's names
    axes, starts, ends = _ints(axes), _ints(starts), _ints(ends)
    if not len(axes) == len(starts) == len(ends):
        raise ShapeError(
            f"slice: axes {axes}, starts {starts} and ends {ends} must have the same length (input{input.shape})"
        )
    return strided_slice(input, axes, starts, ends, [1] * len(axes))


# ----- pad -----------------------------------------------------------------------------------

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_source(mode: str, n: int, before: int, after: int) -> np.ndarray:
    """For one axis, the input position each output position reads (-1: the constant fill)."""
    i = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "circular":
        return i % n
    if mode == "reflect":
        return np.where(i < 0, -i, np.where(i >= n, 2 * (n - 1) - i, i))
    return np.where((i >= 0) & (i < n), i, -1)


def _pad_forward(ctx, x, pads, mode, value):
    if mode == "constant":
        crop = tuple(builtins.slice(max(-b, 0), n - max(-a, 0)) for n, (b, a) in zip(x.shape, pads, strict=True))
        grow = [(max(b, 0), max(a, 0)) for b, a in pads]
        return np.pad(x[crop], grow, constant_values=np.asarray(value, dtype=x.dtype))
    for axis, (n, (b, a)) in enumerate(zip(x.shape, pads, strict=True)):
        if b or a:
            x = np.take(x, _pad_source(mode, n, b, a), axis=axis)
    return x


def _pad_grad_forward(ctx, g, like, pads, mode):
    shape = like.shape
    for axis in reversed(range(len(shape))):
        b, a = pads[axis]
        if not (b or a):
            continue
        src = _pad_source(mode, shape[axis], b, a)
        keep = src >= 0
        moved = np.moveaxis(g, axis, 0)
        out = np.zeros((shape[axis],) + moved.shape[1:], dtype=g.dtype)
        np.add.at(out, src[keep], moved[keep])
        g = np.moveaxis(out, 0, axis)
    return g


pad_grad_op = OpDef(
    "pad_grad",
    _pad_grad_forward,
    lambda ctx, g: (pad_op(g, pads=ctx.attrs["pads"], mode=ctx.attrs["mode"], value=0.0), None),
    _like_grad_infer,
    OPAQUE,
    samples=lambda rng: [
        _g_like(rng, (5, 6), (3, 4), pads=((1, 1), (2, 0)), mode=mode) for mode in ("constant", "reflect", "circular")
    ],
)
"""The transpose of ``pad``: each padded entry's gradient added back onto the entry it copied."""


def _pad_infer(x: Spec, pads, mode, value) -> Spec:
    return Spec(tuple(symbolic.add(d, b, a) for d, (b, a) in zip(x.shape, pads, strict=True)), x.dtype)


def _pad_samples(rng):
    pads = ((1, 1), (2, 0))
    samples = [_x(3, 4)(rng, pads=pads, mode=mode, value=0.5) for mode in _PAD_MODES]
    return samples + [_x(3, 4)(rng, pads=((-1, 2), (0, -2)), mode="constant", value=0.0)]


pad_op = OpDef(
    "pad",
    _pad_forward,
    lambda ctx, g: pad_grad_op(g, ctx.input(0), pads=ctx.attrs["pads"], mode=ctx.attrs["mode"]),
    _pad_infer,
    OPAQUE,
    samples=_pad_samples,
)


def _pad_pairs(x: Tensor, pad: list, data_format, pad_from_left_axis: bool) -> list:
    """Paddle's layout of ``pad``: every dim in order when it covers all dims, else the spatial dims
    from the last one inward ([left, right, top, bottom, front, back])."""
    ndim = x.ndim
    if len(pad) % 2:
        raise ShapeError(f"pad: pad must hold (before, after) pairs, got {len(pad)} numbers for x{x.shape}")
    pairs = [(0, 0)] * ndim
    k = len(pad) // 2
    if k == ndim and pad_from_left_axis:
        return [(pad[2 * i], pad[2 * i + 1]) for i in range(ndim)]
    last = ndim - 2 if data_format is not None and str(data_format).endswith("C") else ndim - 1
    if k > (ndim if k == ndim else last):
        raise ShapeError(
            f"pad: {len(pad)} pad numbers need {k} spatial dims, x{x.shape} has {last} for data_format={data_format}"
        )
    for j in range(k):
        pairs[last - j] = (pad[2 * j], pad[2 * j + 1])
    return pairs


def pad(x, pad, mode="constant", value=0.0, data_format=None, pad_from_left_axis=True, name=None):
    """``paddle.nn.functional.pad`` with modes constant, reflect, replicate and circular."""
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {_PAD_MODES}, got {mode!r}")
    pairs = _pad_pairs(x, _ints(pad), data_format, pad_from_left_axis)
    for axis, (b, a) in enumerate(pairs):
        n = x.shape[axis]
        if mode != "constant" and (b < 0 or a < 0):
            raise ShapeError(f"pad: negative padding {[b, a]} on axis {axis} of x{x.shape} needs mode='constant'")
        if mode == "constant" and b + a + n < 0:
            raise ShapeError(f"pad: padding {[b, a]} crops more than the {n} entries of axis {axis} of x{x.shape}")
        if mode == "reflect" and (b or a) and max(b, a) >= n:
            raise ShapeError(
                f"pad: reflect padding {[b, a]} on axis {axis} of x{x.shape} must be smaller than its size {n}"
            )
        if mode in ("replicate", "circular") and (b or a) and n == 0:
            raise ShapeError(f"pad: {mode} padding of the empty axis {axis} of x{x.shape}")
    return pad_op(x, pads=tuple(pairs), mode=mode, value=float(value))


TENSOR_METHODS = [
    "reshape", "transpose", "flatten", "squeeze", "unsqueeze", "split", "chunk", "tile", "expand", "expand_as",
    "broadcast_to", "flip", "roll", "unbind", "tril", "triu", "slice", "strided_slice",
]  # fmt: skip
FUNCTIONAL = ["pad"]
