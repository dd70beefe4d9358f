"""Columns for convolution as GEMM (NCHW; weight [O, C/G, kh, kw], columns [C*kh*kw, rows*CW]).

A convolution's columns hold one row per (input channel, kernel tap) over a range of output rows
that may span several images; a GEMM of the [O, C*kh*kw] weight with them is the convolution, and
the adjoint of building them (``col2im`` in ``kernels.conv``) gives the input gradient. They are
built in cache-sized blocks (``block_ranges``) from a strided view of the padded input (``window_view``).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .blas import matmul


def channel_major(a: np.ndarray) -> np.ndarray:
    """[N, X, ...] as [X, N*...] (a copy unless N == 1)."""
    n, x = a.shape[:2]
    if n == 1:
        return a.reshape(x, -1)
    return np.ascontiguousarray(a.reshape(n, x, -1).transpose(1, 0, 2)).reshape(x, -1)


def batch_major(a: np.ndarray, n: int) -> np.ndarray:
    """The inverse of ``channel_major``: [X, N*P] as [N, X, P]."""
    x = a.shape[0]
    if n == 1:
        return a.reshape(1, x, -1)
    return np.ascontiguousarray(a.reshape(x, n, -1).transpose(1, 0, 2))


def gemm(w2: np.ndarray, b: np.ndarray, groups: int) -> np.ndarray:
    """Per-group ``w2 @ b`` for a [rows, K] weight and [K', P] operand, groups stacked along rows."""
    if groups == 1:
        return matmul(w2, b)
    return np.matmul(w2.reshape(groups, -1, w2.shape[1]), b.reshape(groups, -1, b.shape[1])).reshape(-1, b.shape[1])


def gemm_nt(a: np.ndarray, b: np.ndarray, groups: int) -> np.ndarray:
    """Per-group ``a @ b.T`` for [O, P] and [G*Kg, P] operands: the [O, Kg] weight gradient. Computed
    as ``(b @ a.T).T``: OpenBLAS runs the long-P product 2x faster with the wide operand on the left
    (0.25 vs 0.53 ms for LeNet's [16, 6400] x [6400, 150])."""
    if groups == 1:
        return matmul(b, a.T).T
    by_group = np.matmul(b.reshape(groups, -1, b.shape[1]), a.reshape(groups, -1, a.shape[1]).transpose(0, 2, 1))
    return by_group.transpose(0, 2, 1).reshape(a.shape[0], -1)


_BLOCK_BYTES = 2 << 20
"""Columns are built and multiplied in blocks of about this size (a range of output rows across the
batch), so a block stays in cache and a large image never holds its whole column matrix."""


_KEEP_COLUMNS_BYTES = 32 << 20
"""When the weight gradient will be needed, columns up to this size are built as one block and kept
for it instead of being rebuilt from x."""


def block_ranges(k: int, n: int, oh: int, cw: int, itemsize: int, keep: bool = False) -> list[tuple[int, int]]:
    """Ranges [q0, q1) of flat output rows (q = image * OH + y), each whole images or rows of one image."""
    per_row = k * cw * itemsize
    if keep and per_row * n * oh <= _KEEP_COLUMNS_BYTES:
        return [(0, n * oh)]
    step = max(1, _BLOCK_BYTES // per_row)
    if step >= oh:
        images = step // oh
        return [(b * oh, min(b + images, n) * oh) for b in range(0, n, images)]
    return [(b * oh + y, b * oh + min(y + step, oh)) for b in range(n) for y in range(0, oh, step)]


def block_index(q0: int, q1: int, oh: int) -> tuple[slice, slice]:
    """The (images, rows) slices of a ``block_ranges`` range."""
    b, y = divmod(q0, oh)
    if y == 0 and (q1 - q0) % oh == 0:
        return slice(b, q1 // oh), slice(None)
    return slice(b, b + 1), slice(y, y + q1 - q0)


def row_width(x_shape, stride, pads, outs, narrow=False) -> int:
    """The width of the column rows: at stride 1 along W, the padded input width ("wide" rows), else
    the output width. In a wide row each kernel tap of a block of output rows is ONE contiguous run
    of the padded input, so the column copy and its adjoint (col2im) move long runs instead of
    OW-long ones (LeNet's 10-wide rows: 3x faster columns, 6x faster col2im); the (kw-1)*dw junk
    columns per row cost that much more GEMM and are cropped from the output. ``narrow`` asks for
    OW-wide rows (``conv_select._narrow_pays``; the columns then feed no gradient: col2im assumes wide rows)."""
    return outs[1] if stride[1] != 1 or narrow else x_shape[3] + pads[2] + pads[3]


def window_view(x, kernel, stride, pads, dil, outs, narrow=False) -> np.ndarray:
    """A read-only [C, kh, kw, N, OH, CW] view of the zero-padded NCHW input whose element
    (c, i, j, n, y, x) is kernel tap (i, j) of output (y, x) (CW: ``row_width``): a block of it,
    copied out, is that block's columns (NumPy's strided copy, 3x faster than a Numba loop over
    10-wide rows). Wide rows read up to (kw-1)*dw elements past the last row, so the input is
    copied into a buffer with that much zeroed slack."""
    n, c, h, w = x.shape
    cw = row_width(x.shape, stride, pads, outs, narrow)
    slack = (kernel[1] - 1) * dil[1] if cw != outs[1] else 0
    if any(pads) or slack:
        pt, pb, pl, pr = pads
        size = n * c * (h + pt + pb) * (w + pl + pr)
        padded = np.zeros(size + slack, dtype=x.dtype)[:size].reshape(n, c, h + pt + pb, w + pl + pr)
        padded[:, :, pt : pt + h, pl : pl + w] = x
        x = padded
    s = x.strides
    shape = (c, *kernel, n, outs[0], cw)
    strides = (s[1], s[2] * dil[0], s[3] * dil[1], s[0], s[2] * stride[0], s[3] * stride[1])
    return as_strided(x, shape=shape, strides=strides, writeable=False)


def block_columns(windows: np.ndarray, q0: int, q1: int) -> np.ndarray:
    """The [C*kh*kw, (q1-q0)*CW] columns of a ``block_ranges`` range."""
    images, rows = block_index(q0, q1, windows.shape[4])
    k = windows.shape[0] * windows.shape[1] * windows.shape[2]
    return np.ascontiguousarray(windows[:, :, :, images, rows]).reshape(k, -1)


def grad_columns(g: np.ndarray, cw: int) -> np.ndarray:
    """The NCHW output gradient in the columns' layout, [O, N*OH*CW]: channel-major, each row
    zero-padded to the column width (zeros, so junk columns add nothing to either gradient)."""
    n, o, oh, ow = g.shape
    if cw == ow:
        return channel_major(g)
    wide = np.zeros((o, n, oh, cw), dtype=g.dtype)
    wide[..., :ow] = g.transpose(1, 0, 2, 3)
    return wide.reshape(o, -1)
