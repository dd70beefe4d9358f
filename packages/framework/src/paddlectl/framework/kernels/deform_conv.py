"""Deformable sampling (DCN v1/v2), the part of ``deform_conv2d`` that is not a matrix product:
each kernel tap of each output position reads the image at its grid point moved by a learned
offset, bilinearly (corners outside the image count 0, points a pixel or more outside read 0) and,
in v2, scaled by a learned mask. Paddle's ``DmcnIm2colBilinear`` and its two gradients
(``DmcnGetGradientWeight`` for the image, ``DmcnGetCoordinateWeight`` for the offsets).

Arrays: ``x`` [N, C, H, W]; ``offset`` [N, 2 * dg * kh * kw, Ho, Wo] holding (dy, dx) per group
and tap; ``mask`` [N, dg * kh * kw, Ho, Wo]; the samples ``cols`` [N, C, kh * kw, Ho, Wo]. Channel
``c`` uses deformable group ``c // (C / dg)``.
"""

import math

import numpy as np

from . import njit


@njit(cache=True, inline="always")
def _point(offset, n, g, k, taps, ho, wo, i, j, geometry):
    """Where tap ``k`` = (i, j) of output (ho, wo) samples: (y, x)."""
    sh, sw, ph, pw, dh, dw = geometry
    base = g * 2 * taps + 2 * k
    y = ho * sh - ph + i * dh + offset[n, base, ho, wo]
    x = wo * sw - pw + j * dw + offset[n, base + 1, ho, wo]
    return y, x


@njit(cache=True, inline="always")
def _corners(y, x, h, w):
    """The four corners' (row, column, weight, d weight / dy, d weight / dx); a corner outside the
    image gets weight 0. All zero for a point at or beyond a pixel outside."""
    out = np.zeros((4, 5))
    if y <= -1 or x <= -1 or y >= h or x >= w:
        return out
    y0, x0 = math.floor(y), math.floor(x)
    ly, lx = y - y0, x - x0
    k = 0
    for cy, wy, dy in ((y0, 1.0 - ly, -1.0), (y0 + 1, ly, 1.0)):
        for cx, wx, dx in ((x0, 1.0 - lx, -1.0), (x0 + 1, lx, 1.0)):
            if 0 <= cy <= h - 1 and 0 <= cx <= w - 1:
                out[k, 0], out[k, 1] = cy, cx
                out[k, 2], out[k, 3], out[k, 4] = wy * wx, dy * wx, wy * dx
            k += 1
    return out


@njit(cache=True)
def deform_sample(x, offset, mask, kh, kw, geometry, groups):
    """``cols``: each channel's bilinear sample at every tap and output position, times the mask."""
    n_img, c, h, w = x.shape
    ho, wo = offset.shape[2], offset.shape[3]
    taps, per = kh * kw, c // groups
    cols = np.zeros((n_img, c, taps, ho, wo), x.dtype)
    for n in range(n_img):
        for g in range(groups):
            for k in range(taps):
                for a in range(ho):
                    for b in range(wo):
                        y, xx = _point(offset, n, g, k, taps, a, b, k // kw, k % kw, geometry)
                        cs = _corners(y, xx, h, w)
                        m = mask[n, g * taps + k, a, b]
                        for ch in range(g * per, (g + 1) * per):
                            v = 0.0
                            for q in range(4):
                                v += cs[q, 2] * x[n, ch, int(cs[q, 0]), int(cs[q, 1])]
                            cols[n, ch, k, a, b] = v * m
    return cols


@njit(cache=True)
def deform_sample_adjoint(g_cols, offset, mask, h, w, kh, kw, geometry, groups):
    """The gradient of ``deform_sample`` in its image: each sample's gradient (times the mask)
    spread over its corners with their bilinear weights."""
    n_img, c, taps, ho, wo = g_cols.shape
    per = c // groups
    gx = np.zeros((n_img, c, h, w), g_cols.dtype)
    for n in range(n_img):
        for g in range(groups):
            for k in range(taps):
                for a in range(ho):
                    for b in range(wo):
                        y, xx = _point(offset, n, g, k, taps, a, b, k // kw, k % kw, geometry)
                        cs = _corners(y, xx, h, w)
                        m = mask[n, g * taps + k, a, b]
                        for ch in range(g * per, (g + 1) * per):
                            share = g_cols[n, ch, k, a, b] * m
                            for q in range(4):
                                gx[n, ch, int(cs[q, 0]), int(cs[q, 1])] += cs[q, 2] * share
    return gx


@njit(cache=True)
def deform_sample_coord_grad(g_cols, x, offset, mask, kh, kw, geometry, groups):
    """The gradients of ``deform_sample`` in its offsets and mask: per group, tap and position, the
    channels' gradients times the derivative of the bilinear sample in y and x (times the mask),
    and times the unmasked sample."""
    n_img, c, h, w = x.shape
    taps, ho, wo = g_cols.shape[2], g_cols.shape[3], g_cols.shape[4]
    per = c // groups
    g_off = np.zeros(offset.shape, x.dtype)
    g_mask = np.zeros(mask.shape, x.dtype)
    for n in range(n_img):
        for g in range(groups):
            for k in range(taps):
                for a in range(ho):
                    for b in range(wo):
                        y, xx = _point(offset, n, g, k, taps, a, b, k // kw, k % kw, geometry)
                        cs = _corners(y, xx, h, w)
                        m = mask[n, g * taps + k, a, b]
                        gy = gxx = gm = 0.0
                        for ch in range(g * per, (g + 1) * per):
                            gc = g_cols[n, ch, k, a, b]
                            v = dy = dx = 0.0
                            for q in range(4):
                                pixel = x[n, ch, int(cs[q, 0]), int(cs[q, 1])]
                                v += cs[q, 2] * pixel
                                dy += cs[q, 3] * pixel
                                dx += cs[q, 4] * pixel
                            gm += gc * v
                            gy += gc * m * dy
                            gxx += gc * m * dx
                        g_off[n, g * 2 * taps + 2 * k, a, b] = gy
                        g_off[n, g * 2 * taps + 2 * k + 1, a, b] = gxx
                        g_mask[n, g * taps + k, a, b] = gm
    return g_off, g_mask
