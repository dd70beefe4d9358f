"""Embedding lookup: rows of a weight table gathered by integer ids; the padding row reads as
zeros and receives no gradient, as in Paddle. With ``sparse=True`` the table's gradient is a
SelectedRows (the looked-up rows and their gradients), never a table-sized array."""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.selected_rows import SelectedRows
from ..core.state import STATE
from ..errors import DTypeError, ShapeError
from ..kernels.index import rows_add
from .shape import reshape


def _embedding_forward(
    ctx, ids, weight, padding_idx=None, scale_grad_by_freq=False, max_norm=None, norm_type=2.0, sparse=False
):
    if ids.dtype.kind not in "iu":
        raise DTypeError(f"embedding: ids must be an integer tensor (int32/int64), got {ids.dtype}")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D [num_embeddings, dim], got shape {list(weight.shape)}")
    if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ShapeError(
            f"embedding: ids must lie in [0, {weight.shape[0]}) for a table of {weight.shape[0]} rows, "
            f"got values in [{ids.min()}, {ids.max()}]"
        )
    if max_norm is not None:
        _renorm_(weight, ids, max_norm, norm_type)
    out = weight[ids]
    if padding_idx is not None:
        out[ids == padding_idx] = 0
    return out


def _embedding_vjp(ctx, g):
    ids = ctx.input(0)
    weight = ctx.input(1)
    attrs = {k: v for k, v in ctx.attrs.items() if k != "sparse"}
    if ctx.attrs.get("sparse") and _sparse_ok(weight):
        rows, values = embedding_rows_grad_op(ids, g, **attrs)
        return None, SelectedRows._of(rows._data, values._data, weight.shape[0])
    return None, embedding_grad_op(ids, g, rows=weight.shape[0], **attrs)


def _sparse_ok(weight) -> bool:
    """A row-sparse gradient only goes where it is the end of the road: into a leaf table's ``.grad``
    in an eager backward. A traced backward, a differentiable one (``create_graph``) or a table
    computed by other ops gets the dense gradient every op understands."""
    return weight._node is None and STATE.tracer is None and not STATE.grad_enabled


def _embedding_infer(ids: Spec, weight: Spec, **attrs) -> Spec:
    return Spec((*ids.shape, weight.shape[1]), weight.dtype)


def _freq(ids: np.ndarray, rows: int, dtype) -> np.ndarray:
    """Each id's count in the batch, per looked-up row (``scale_grad_by_freq`` divides by it)."""
    flat = ids.reshape(-1)
    return np.bincount(flat, minlength=rows)[flat].astype(dtype)


def _embedding_grad_forward(ctx, ids, g, rows, padding_idx=None, scale_grad_by_freq=False, **renorm):
    """The table's gradient: each looked-up row's output gradient summed into its row."""
    flat = ids.reshape(-1)
    looked = g.reshape(-1, g.shape[-1])
    if scale_grad_by_freq:
        looked = looked / _freq(ids, rows, g.dtype)[:, None]
    grad = np.zeros((rows, g.shape[-1]), dtype=g.dtype)
    rows_add(grad, flat, looked)
    if padding_idx is not None:
        grad[padding_idx] = 0
    return grad


def _embedding_rows_grad_forward(ctx, ids, g, padding_idx=None, scale_grad_by_freq=False, **renorm):
    """The sparse form of ``embedding_grad``: each looked-up id and its output gradient row, in lookup
    order (repeated ids repeat, as Paddle's); the padding row's entries are zeros."""
    rows = ids.reshape(-1).astype(np.int64)
    values = np.array(g.reshape(-1, g.shape[-1]), copy=True)
    if scale_grad_by_freq:
        _, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
        values /= counts[inverse.reshape(-1)].astype(values.dtype)[:, None]
    if padding_idx is not None:
        values[rows == padding_idx] = 0
    return rows, values


def _embedding_rows_grad_infer(ids: Spec, g: Spec, **attrs):
    n = symbolic.product(ids.shape)
    return Spec((n,), np.dtype(np.int64)), Spec((n, g.shape[-1]), g.dtype)


def _embedding_grad_vjp(ctx, gg):
    """Linear in ``g``: its transpose is the lookup itself (padding rows read as zeros)."""
    a = ctx.attrs
    ids = ctx.input(0)
    out = embedding_op(ids, gg, padding_idx=a.get("padding_idx"))
    if a.get("scale_grad_by_freq"):
        out = out / reshape(embedding_freq_op(ids, rows=a["rows"], dtype=gg.dtype.name), [*ids.shape, 1])
    return None, out


def _embedding_grad_infer(ids: Spec, g: Spec, rows, **attrs) -> Spec:
    return Spec((rows, g.shape[-1]), g.dtype)


def _grad_samples(rng):
    ids = np.array([[0, 2], [2, 3]])
    g = rng.standard_normal((2, 2, 3))
    return [
        Sample((ids, g), {"rows": 4}),
        Sample((ids, g), {"rows": 5, "padding_idx": 2, "scale_grad_by_freq": True}),
    ]


def _samples(rng):
    """scale_grad_by_freq is not sampled: it scales the gradient away from the derivative on purpose
    (as in Paddle), which finite differences would report; embedding_grad's samples cover it."""
    ids = np.array([[0, 2], [2, 3]])
    return [Sample((ids, rng.standard_normal((4, 3)))), Sample((ids, rng.standard_normal((5, 3))), {"padding_idx": 2})]


embedding_op = OpDef(
    "embedding", _embedding_forward, _embedding_vjp, _embedding_infer, OPAQUE, samples=_samples, items=True
)
embedding_grad_op = OpDef(
    "embedding_grad",
    _embedding_grad_forward,
    _embedding_grad_vjp,
    _embedding_grad_infer,
    OPAQUE,
    samples=_grad_samples,
)
embedding_rows_grad_op = OpDef(
    "embedding_rows_grad",
    _embedding_rows_grad_forward,
    None,
    _embedding_rows_grad_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((np.array([[0, 2], [2, 3]]), rng.standard_normal((2, 2, 3)))),
        Sample(
            (np.array([[0, 2], [2, 3]]), rng.standard_normal((2, 2, 3))), {"padding_idx": 2, "scale_grad_by_freq": True}
        ),
    ],
)
"""``embedding_grad`` as (rows, values): a ``sparse=True`` table's gradient. It has no gradient of
its own: a differentiable backward uses the dense form."""
embedding_freq_op = OpDef(
    "embedding_freq",
    lambda ctx, ids, rows, dtype: _freq(ids, rows, np.dtype(dtype)),
    None,
    lambda ids, rows, dtype: Spec((symbolic.product(ids.shape),), np.dtype(dtype)),
    OPAQUE,
    samples=lambda rng: [Sample((np.array([[0, 2], [2, 3]]),), {"rows": 4, "dtype": "float64"})],
)
"""How often each looked-up id occurs in the batch (``scale_grad_by_freq``'s divisor), as an op so a
traced backward counts its own ids."""


def _renorm_(data: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Rescale in place the looked-up rows whose norm exceeds ``max_norm`` (Paddle writes the weight;
    no gradient sees it). A traced program refuses this write into a parameter."""
    rows = np.unique(ids)
    norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    data[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None].astype(data.dtype)


def embedding(
    x, weight, padding_idx=None, max_norm=None, norm_type=2.0, sparse=False, scale_grad_by_freq=False, name=None
):
    """``weight[x]``. ``padding_idx`` may be negative (counted from the end); ``sparse=True`` makes
    the table's ``.grad`` a SelectedRows of the looked-up rows (core/selected_rows.py)."""
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx must be in [{-num}, {num}), got {padding_idx}")
        padding_idx = int(padding_idx) % num
    renorm = {} if max_norm is None else {"max_norm": float(max_norm), "norm_type": float(norm_type)}
    if sparse:
        renorm["sparse"] = True  # only when set: a dense table's recorded op is unchanged
    return embedding_op(x, weight, padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq), **renorm)


def is_selected_rows(x) -> bool:
    """Whether ``x`` is a row-sparse gradient (Paddle's ``Tensor.is_selected_rows``)."""
    return isinstance(x, SelectedRows)


FUNCTIONAL = ["embedding"]
TENSOR_METHODS = ["is_selected_rows"]
