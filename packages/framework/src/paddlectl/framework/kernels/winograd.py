"""Winograd F(2x2, 3x3) convolution transforms (NCHW, stride 1, one group).

Each 2x2 output tile is ``A^T [ (G g G^T) * (B^T d B) ] A`` over its 4x4 input window ``d``: with
the filters transformed once (``weights``), the 16 products of all tiles and channels are 16 GEMMs
``[O, C] @ [C, tiles]``, 2.25x fewer multiply-adds than a direct 3x3, over inputs 4x (columns: 9x)
the size of the input.

Layout: the zero-padded input plane is split into four phase planes (rows ``2r + a``, columns
``2k + b``) of ``th + 1`` rows of ``tw + 1``; tile (ty, tx) sits at ``q = ty*(tw + 1) + tx`` of each,
its window's rows and columns two phases at offsets 0 and 1 (row) or ``tw + 1`` (column). The row
step of the input transform is then one flat loop over a plane's tiles (one junk tile per tile
row), and its column step one loop per tile row into ``V``, which holds real tiles only
(``t = (n*th + ty)*tw + tx``): junk tiles would cost GEMM work, a third of it on 4x4 planes. The
output transform runs flat over a plane's tiles, then interleaves them into rows.

As in ``conv``'s depthwise kernels, the per-plane loops take whole 2-D buffers and uint64 offsets,
not views (a view costs two atomic reference-count updates, more than a small plane's arithmetic),
and each part of the planes allocates its buffers once.
"""

import numpy as np
from numba import prange, uint64

from . import njit, parallel_kernel
from .conv import _PARTS

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def weights(w: np.ndarray) -> np.ndarray:
    """``U[4i + j, o, c] = (G w[o, c] G^T)[i, j]`` for [O, C, 3, 3] ``w``, computed in float64."""
    u = np.einsum("ia,ocab,jb->ijoc", _G, w.astype(np.float64), _G)
    return np.ascontiguousarray(u.reshape(16, w.shape[0], w.shape[1]).astype(w.dtype))


def tiles(oh: int, ow: int) -> tuple[int, int]:
    """(tile rows, tile columns) of 2x2 outputs."""
    return (oh + 1) // 2, (ow + 1) // 2


@njit(cache=True, inline="always")
def _combine(out, ro, oo, a, ra, oa, sa, b, rb, ob, sb, n):
    """``out[ro, oo:oo+n] = sa*a[ra, oa:oa+n] + sb*b[rb, ob:ob+n]`` (signs +-1), without views."""
    for q in range(n):
        out[ro, uint64(oo + q)] = sa * a[ra, uint64(oa + q)] + sb * b[rb, uint64(ob + q)]


@njit(cache=True, inline="always")
def _sum3(out, ro, a, ra, sb, b, rb, sc, c, rc, at, n):
    """``out[ro, :n] = a[ra, at:] + sb*b[rb, at:] + sc*c[rc, at:]`` (signs +-1), without views."""
    for q in range(n):
        out[ro, q] = a[ra, uint64(at + q)] + sb * b[rb, uint64(at + q)] + sc * c[rc, uint64(at + q)]


@njit(cache=True, error_model="numpy")
def _fill_phases(phases, x, b, ch, pt, pl, width):
    """phases[2a + e, r*width + k] = zero-padded x[b, ch][2r + a, 2k + e], image part only (the zero
    border stays from plane to plane): per row and phase one strided pass, no branch per element."""
    h, w = x.shape[2], x.shape[3]
    rows = (phases.shape[1] - 1) // width
    for y in range(min(h, 2 * rows - pt)):
        row = y + pt
        at = (row >> 1) * width
        for e in range(2):
            k0 = (pl - e + 1) >> 1  # first phase column inside the image
            z0 = 2 * k0 + e - pl
            for k in range(min((w - z0 + 1) >> 1, width - k0)):
                phases[2 * (row & 1) + e, uint64(at + k0 + k)] = x[b, ch, y, uint64(z0 + 2 * k)]


@njit(cache=True, error_model="numpy")
def _transform_plane(v, phases, lines, row0, at, th, tw):
    """B^T d B for one plane's tiles into rows ``(4i + j)*C + row0`` of ``v`` from column ``at``:
    per row i of B^T (d0-d2, d1+d2, d2-d1, d1-d3 over the window's rows, which are the row phases
    at offsets 0 and ``width``), its two column-phase lines, then their four column combinations."""
    width = tw + 1
    n = th * width + 1
    step = v.shape[0] // 16
    for i in range(4):
        for e in range(2):
            if i == 0:
                _combine(lines, e, 0, phases, e, 0, 1.0, phases, e, width, -1.0, n)
            elif i == 1:
                _combine(lines, e, 0, phases, 2 + e, 0, 1.0, phases, e, width, 1.0, n)
            elif i == 2:
                _combine(lines, e, 0, phases, e, width, 1.0, phases, 2 + e, 0, -1.0, n)
            else:
                _combine(lines, e, 0, phases, 2 + e, 0, 1.0, phases, 2 + e, width, -1.0, n)
        r = row0 + 4 * i * step
        for ty in range(th):
            o, q = at + ty * tw, ty * width
            _combine(v, r, o, lines, 0, q, 1.0, lines, 0, q + 1, -1.0, tw)
            _combine(v, r + step, o, lines, 1, q, 1.0, lines, 0, q + 1, 1.0, tw)
            _combine(v, r + 2 * step, o, lines, 0, q + 1, 1.0, lines, 1, q, -1.0, tw)
            _combine(v, r + 3 * step, o, lines, 1, q, 1.0, lines, 1, q + 1, -1.0, tw)


@parallel_kernel
def inputs(x, pt, pl, th, tw):
    """``V[16*C, N*th*tw]`` (row ``k*C + c``, reshaped by the caller to [16, C, tiles]): B^T d B
    of every tile's 4x4 window."""
    n, c = x.shape[0], x.shape[1]
    width = tw + 1
    v = np.empty((16 * c, n * th * tw), dtype=x.dtype)
    tasks = n * c
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        phases = np.zeros((4, (th + 1) * width + 1), dtype=x.dtype)
        lines = np.empty((2, th * width + 1), dtype=x.dtype)
        for task in range(part * tasks // parts, (part + 1) * tasks // parts):
            b, ch = task // c, task % c
            _fill_phases(phases, x, b, ch, pt, pl, width)
            _transform_plane(v, phases, lines, ch, b * th * tw, th, tw)
    return v


@njit(cache=True, error_model="numpy")
def _output_plane(out, m, rows, tile, b, o, o_ch, at, tw):
    """A^T m A for one output plane (A^T rows: m0+m1+m2, m1-m2-m3), over the rows of each tile first,
    then its columns, then interleaved into ``out[b, o]``."""
    span = tile.shape[1]
    for j in range(4):
        r0, r1, r2, r3 = j * o_ch + o, (4 + j) * o_ch + o, (8 + j) * o_ch + o, (12 + j) * o_ch + o
        _sum3(rows, j, m, r0, 1.0, m, r1, 1.0, m, r2, at, span)
        _sum3(rows, 4 + j, m, r1, -1.0, m, r2, -1.0, m, r3, at, span)
    for r in range(2):
        _sum3(tile, 2 * r, rows, 4 * r, 1.0, rows, 4 * r + 1, 1.0, rows, 4 * r + 2, 0, span)
        _sum3(tile, 2 * r + 1, rows, 4 * r + 1, -1.0, rows, 4 * r + 2, -1.0, rows, 4 * r + 3, 0, span)
    oh, ow = out.shape[2], out.shape[3]
    for y in range(oh):
        base = (y >> 1) * tw
        t = 2 * (y & 1)
        for k in range(ow >> 1):
            out[b, o, y, uint64(2 * k)] = tile[t, uint64(base + k)]
            out[b, o, y, uint64(2 * k + 1)] = tile[t + 1, uint64(base + k)]
        if ow & 1:
            out[b, o, y, ow - 1] = tile[t, uint64(base + (ow >> 1))]


@parallel_kernel
def outputs(m, out, th, tw):
    """The [N, O, oh, ow] result, into ``out``, from the GEMMs' ``M[16*O, N*th*tw]`` (row ``k*O + o``)."""
    n, o_ch = out.shape[0], out.shape[1]
    span = th * tw
    tasks = n * o_ch
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        rows = np.empty((8, span), dtype=m.dtype)
        tile = np.empty((4, span), dtype=m.dtype)  # output (r, s) of each tile at tile[2r + s]
        for task in range(part * tasks // parts, (part + 1) * tasks // parts):
            b, o = task // o_ch, task % o_ch
            _output_plane(out, m, rows, tile, b, o, o_ch, b * span, tw)
