"""``paddle.sparse.nn.functional.max_pool3d``: the largest stored value under each window.

The candidates of every (tap, output site) pair are scattered into a [taps, n_out, C] table of
-inf and reduced with max (ops, so the gradient goes to the chosen inputs); an output site exists
where a window covers at least one stored input, as in Paddle."""

from __future__ import annotations

import numpy as np

from ....core.tensor import Tensor
from ....ops._window import as_tuple
from ....ops.creation import full, zeros
from ....ops.index import index_select, scatter
from ....ops.reduce import max as dense_max
from ....ops.shape import reshape
from ...tensor import SparseCooTensor
from . import rulebook
from .conv import channels_last_coo, window_padding


def max_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NDHWC", name=None):
    """``stride`` defaults to the kernel; ``ceil_mode`` is accepted and, as in Paddle's sparse
    kernel, has no effect (output sizes round down)."""
    op = "sparse max_pool3d"
    x = channels_last_coo(op, x, 3, data_format)
    kernel = as_tuple(op, "kernel_size", kernel_size, 3)
    stride = kernel if stride is None else as_tuple(op, "stride", stride, 3)
    book = rulebook.build(op, x._indices, x.shape[1:-1], kernel, stride, window_padding(op, padding, 3),
                          (1, 1, 1), subm=False)  # fmt: skip
    n_out, channels = book.out_indices.shape[1], x.shape[-1]
    shape = [x.shape[0], *book.out_spatial, channels]
    if not n_out:  # nothing stored, nothing pooled (and a reshape to 0 rows would mean "keep the dim")
        return SparseCooTensor(book.out_indices, zeros([0, channels], x.dtype), shape, coalesced=True)
    slots = np.concatenate([tap * n_out + rows_out for tap, _, rows_out in book.pairs])
    picked = index_select(x.values(), Tensor(np.concatenate([rows_in for _, rows_in, _ in book.pairs])))
    taps = int(np.prod(kernel))
    table = scatter(full([taps * n_out, channels], -np.inf, x.dtype), Tensor(slots), picked)
    out = dense_max(reshape(table, [taps, n_out, channels]), axis=0)
    return SparseCooTensor(book.out_indices, out, shape, coalesced=True)
