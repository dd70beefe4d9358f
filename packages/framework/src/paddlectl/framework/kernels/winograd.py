"""Winograd F(2x2, 3x3) convolution transforms (NCHW, stride 1, one group).

Each 2x2 output tile is ``A^T [ (G g G^T) * (B^T d B) ] A`` over its 4x4 input window ``d``: with
the filters transformed once (``weights``), the 16 products of all tiles and channels are 16 GEMMs
``[O, C] @ [C, tiles]``, 2.25x fewer multiply-adds than a direct 3x3, over inputs 4x (columns: 9x)
the size of the input.

Layout: the zero-padded input plane is split into four phase planes (rows ``2r + a``, columns
``2k + b``) of ``th + 1`` rows of ``tw + 1``; tile (ty, tx) sits at ``q = ty*(tw + 1) + tx`` of each,
its window's rows and columns two phases at offsets 0 and 1 (row) or ``tw + 1`` (column). Every
step of both transforms is then one flat loop over a plane's tiles, which LLVM vectorises; each
tile row carries one junk tile (``tx = tw``), kept in ``V`` and ``M`` and dropped at the end.
"""

import numpy as np
from numba import njit, prange

from . import parallel_kernel

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def weights(w: np.ndarray) -> np.ndarray:
    """``U[4i + j, o, c] = (G w[o, c] G^T)[i, j]`` for [O, C, 3, 3] ``w``, computed in float64."""
    u = np.einsum("ia,ocab,jb->ijoc", _G, w.astype(np.float64), _G)
    return np.ascontiguousarray(u.reshape(16, w.shape[0], w.shape[1]).astype(w.dtype))


def tiles(oh: int, ow: int) -> tuple[int, int, int]:
    """(tile rows, tile columns, tiles per image as stored: one junk tile per row)."""
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    return th, tw, th * (tw + 1)


@njit(cache=True, inline="always")
def _fill_phases(phases, plane, pt, pl, width):
    """phases[2a + b, r*width + k] = zero-padded plane[2r + a, 2k + b] (the rest stays zero)."""
    h, w = plane.shape
    rows = phases.shape[1] // width
    for y in range(h):
        row = y + pt
        if row >> 1 >= rows:
            break
        dst = phases[2 * (row & 1)]
        odd = phases[2 * (row & 1) + 1]
        at = (row >> 1) * width
        src = plane[y]
        for z in range(min(w, 2 * width - pl)):
            col = z + pl
            if col & 1:
                odd[at + (col >> 1)] = src[z]
            else:
                dst[at + (col >> 1)] = src[z]


@njit(cache=True, inline="always")
def _combine(out, a, sa, b, sb):
    """``out = sa*a + sb*b`` elementwise (signs +-1): one vectorised pass."""
    for q in range(out.size):
        out[q] = sa * a[q] + sb * b[q]


@parallel_kernel
def inputs(x, pt, pl, th, tw):
    """``V[16, C, N*th*(tw+1)]``: B^T d B of every tile's 4x4 window (B^T rows: d0-d2, d1+d2,
    d2-d1, d1-d3), over the rows first, then the columns."""
    n, c = x.shape[0], x.shape[1]
    width = tw + 1
    span = th * width
    v = np.empty((16, c, n * span), dtype=x.dtype)
    for task in prange(n * c):
        b, ch = task // c, task % c
        phases = np.zeros((4, (th + 1) * width + 1), dtype=x.dtype)
        _fill_phases(phases, x[b, ch], pt, pl, width)
        rows = np.empty((8, span + 1), dtype=x.dtype)  # row-combined lines, by column phase
        for e in range(2):
            even, odd = phases[e], phases[2 + e]  # window rows 0/2 and 1/3 (next tile row: + width)
            _combine(rows[e], even, 1.0, even[width:], -1.0)
            _combine(rows[2 + e], odd, 1.0, even[width:], 1.0)
            _combine(rows[4 + e], even[width:], 1.0, odd, -1.0)
            _combine(rows[6 + e], odd, 1.0, odd[width:], -1.0)
        at = b * span
        for i in range(4):
            s0, s1 = rows[2 * i], rows[2 * i + 1]  # window columns 0/2 and 1/3 (next tile: + 1)
            _combine(v[4 * i, ch, at : at + span], s0, 1.0, s0[1:], -1.0)
            _combine(v[4 * i + 1, ch, at : at + span], s1, 1.0, s0[1:], 1.0)
            _combine(v[4 * i + 2, ch, at : at + span], s0[1:], 1.0, s1, -1.0)
            _combine(v[4 * i + 3, ch, at : at + span], s1, 1.0, s1[1:], -1.0)
    return v


@njit(cache=True, inline="always")
def _sum3(out, a, sb, b, sc, c):
    """``out = a + sb*b + sc*c`` elementwise (signs +-1)."""
    for q in range(out.size):
        out[q] = a[q] + sb * b[q] + sc * c[q]


@parallel_kernel
def outputs(m, n, oh, ow, th, tw):
    """The [N, O, oh, ow] result from the GEMMs' ``M[16, O, N*th*(tw+1)]``: A^T m A per tile (A^T
    rows: m0+m1+m2, m1-m2-m3), over the rows first, then the columns, then interleaved."""
    o_ch = m.shape[1]
    span = th * (tw + 1)
    out = np.empty((n, o_ch, oh, ow), dtype=m.dtype)
    for task in prange(n * o_ch):
        b, o = task // o_ch, task % o_ch
        at = b * span
        rows = np.empty((8, span), dtype=m.dtype)
        for j in range(4):
            m0, m1, m2, m3 = m[j, o, at:], m[4 + j, o, at:], m[8 + j, o, at:], m[12 + j, o, at:]
            _sum3(rows[j], m0, 1.0, m1, 1.0, m2)
            _sum3(rows[4 + j], m1, -1.0, m2, -1.0, m3)
        tile = np.empty((4, span), dtype=m.dtype)  # output (r, s) of each tile at tile[2r + s]
        for r in range(2):
            a0, a1, a2, a3 = rows[4 * r], rows[4 * r + 1], rows[4 * r + 2], rows[4 * r + 3]
            _sum3(tile[2 * r], a0, 1.0, a1, 1.0, a2)
            _sum3(tile[2 * r + 1], a1, -1.0, a2, -1.0, a3)
        for y in range(oh):
            src0, src1 = tile[2 * (y & 1)], tile[2 * (y & 1) + 1]
            base = (y >> 1) * (tw + 1)
            dst = out[b, o, y]
            for z in range(ow):
                dst[z] = src1[base + (z >> 1)] if z & 1 else src0[base + (z >> 1)]
    return out
