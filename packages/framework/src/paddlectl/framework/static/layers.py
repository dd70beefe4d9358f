"""``paddle.static.nn`` layers: functions that create their parameters where they are called (in
static mode, in the main program) and apply them once."""

from __future__ import annotations

import math

import numpy as np

from ..autograd.py_layer import PyLayer
from ..errors import ConfigError, DTypeError, ShapeError
from ..nn import functional as F
from ..nn.layer.common import Linear
from ..nn.layer.embedding import Embedding
from ..nn.layer.spectral_norm import SpectralNorm
from ..ops.shape import flatten, reshape


def fc(x, size: int, num_flatten_dims: int = 1, weight_attr=None, bias_attr=None, activation=None, name=None):
    """``x`` flattened from ``num_flatten_dims`` on, times a new [in, size] weight, plus a bias, then
    ``activation`` (a name in ``paddle.nn.functional``); a list of inputs gets one weight each, summed."""
    inputs = x if isinstance(x, list | tuple) else [x]
    out = None
    for i, t in enumerate(inputs):
        flat = flatten(t, num_flatten_dims) if t.ndim > num_flatten_dims + 1 else t
        features = math.prod(t.shape[num_flatten_dims:])
        layer = Linear(features, size, weight_attr=weight_attr, bias_attr=bias_attr if i == 0 else False, name=name)
        y = layer(flat)
        out = y if out is None else out + y
    if inputs[0].ndim > num_flatten_dims + 1:
        out = reshape(out, [0] * num_flatten_dims + [size])
    return getattr(F, activation)(out) if activation else out


_TABLE_CLASSES = ("CommonSparseTable", "MemorySparseTable")


def sparse_embedding(
    input, size, padding_idx=None, is_test=False, entry=None, table_class="MemorySparseTable",
    param_attr=None, dtype="float32", slot=None,
):  # fmt: skip
    """A new [size[0], size[1]] table looked up by int64 ids (Paddle's ``lookup_table``: ids of
    shape [..., 1] give [..., dim]). It is an in-memory table with a row-sparse gradient
    (``nn.Embedding(sparse=True)``); eagerly its ``.grad`` is a SelectedRows, in a static program
    the traced backward computes the table-shaped gradient. Parameter-server options (an ``entry``
    admission policy, an SSD table) are refused: there is no parameter server here.
    ``is_test=True`` looks up without training the table; ``slot`` is a feature-slot tag, kept for
    Paddle's signature only."""
    if not (isinstance(size, list | tuple) and len(size) == 2 and all(isinstance(d, int) and d > 0 for d in size)):
        raise ConfigError(f"sparse_embedding: size must be [vocab_size, emb_size] of positive ints, got {size!r}")
    if entry is not None:
        raise ConfigError(
            "sparse_embedding: entry admission policies (ProbabilityEntry, CountFilterEntry, ShowClickEntry) "
            "need a parameter server, which paddlectl has not; pass entry=None"
        )
    if table_class not in _TABLE_CLASSES:
        raise ConfigError(
            f"sparse_embedding: table_class {table_class!r} is not available; the in-memory tables "
            f"{list(_TABLE_CLASSES)} are (SSDSparseTable needs a parameter server)"
        )
    if str(dtype) not in ("float32", "float64"):
        raise DTypeError(f"sparse_embedding: dtype must be float32 or float64, got {dtype}")
    if slot is not None and (isinstance(slot, bool) or not isinstance(slot, int)):
        raise ConfigError(f"sparse_embedding: slot must be an int or None, got {slot!r}")
    if input.dtype != np.int64:
        raise DTypeError(
            f"sparse_embedding: input ids must be int64, got {input.dtype}; cast them with .astype('int64')"
        )
    if input.size == 0:
        raise ShapeError("sparse_embedding: input is empty; pass at least one id")
    table = Embedding(size[0], size[1], padding_idx, sparse=True, weight_attr=param_attr, dtype=str(dtype))
    if is_test:
        table.weight.stop_gradient = True
    ids = reshape(input, [0] * (input.ndim - 1)) if input.ndim > 1 and input.shape[-1] == 1 else input
    return table(ids)


def embedding(
    input, size, is_sparse: bool = False, is_distributed: bool = False, padding_idx=None, param_attr=None,
    dtype="float32",
):  # fmt: skip
    """A new [size[0], size[1]] table looked up by the int ids of ``input``: the output is
    ``input.shape + [size[1]]`` (Paddle's ``lookup_table_v2``); ``is_sparse`` gives the table a
    row-sparse gradient. A table split over parameter servers (``is_distributed``) is refused."""
    if not (isinstance(size, list | tuple) and len(size) == 2 and all(isinstance(d, int) and d > 0 for d in size)):
        raise ConfigError(f"embedding: size must be [vocab_size, emb_size] of positive ints, got {size!r}")
    if is_distributed:
        raise ConfigError("embedding: is_distributed needs a parameter server, which paddlectl has not; pass False")
    if str(dtype) not in ("float32", "float64"):
        raise DTypeError(f"embedding: dtype must be float32 or float64, got {dtype}")
    return Embedding(size[0], size[1], padding_idx, sparse=is_sparse, weight_attr=param_attr, dtype=str(dtype))(input)


def spectral_norm(weight, dim: int = 0, power_iters: int = 1, eps: float = 1e-12, name=None):
    """``weight`` divided by its spectral norm, as ``nn.SpectralNorm`` computes it, with the layer's
    ``u``, ``v`` vectors created here (in static mode, in the main program)."""
    return SpectralNorm(list(weight.shape), dim, power_iters, eps, dtype=str(weight.dtype))(weight)


def static_pylayer(forward_fn, inputs, backward_fn=None, name=None):
    """``forward_fn(*inputs)`` as one op whose gradient is ``backward_fn(*output_grads)`` (a
    ``PyLayer`` made of the two functions); without ``backward_fn`` the forward's own ops are
    recorded and differentiated as they are."""
    inputs = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
    if backward_fn is None:
        return forward_fn(*inputs)

    class _StaticPyLayer(PyLayer):
        @staticmethod
        def forward(ctx, *xs):
            return forward_fn(*xs)

        @staticmethod
        def backward(ctx, *grads):
            return backward_fn(*grads)

    return _StaticPyLayer.apply(*inputs)
