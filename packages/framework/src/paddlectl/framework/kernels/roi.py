"""Region-of-interest pooling kernels: RoIAlign (Paddle's ``roi_align``, ONNX's ``RoiAlign``),
RoIPool's argmax and position-sensitive RoI pooling, as Paddle's CPU kernels compute them.

Each RoI ``r`` reads image ``batch[r]``. RoIAlign and PSRoIPool average, so they are linear in the
image: each has a forward and its adjoint (the gradient), sharing the loops that find the sample
points and their weights, so the two can never disagree. ONNX's ``max`` mode takes, per sample
point, the largest of the four weighted corners and then the largest over the points (onnxruntime's
and the ONNX reference's definition; it is not a max of interpolated values).
"""

import math

import numpy as np

from . import njit


@njit(cache=True, inline="always")
def _corners(y, x, h, w):
    """Bilinear corners and weights of the point (y, x) in an ``h`` x ``w`` image, Paddle's and
    onnxruntime's way: points more than a pixel outside weigh 0, others are clamped to the border."""
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0
    y = max(y, 0.0)
    x = max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    return y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1, hy * hx, hy * lx, ly * hx, ly * lx


@njit(cache=True)
def _align_points(box, scale, ph, pw, h, w, ratio, aligned):
    """For every bin of one RoI and every sample point in it: the four flat pixel positions and
    weights ([ph * pw, points, 4] each) and the number of points per bin (the average's divisor)."""
    offset = 0.5 if aligned else 0.0
    x1, y1 = box[0] * scale - offset, box[1] * scale - offset
    rw, rh = box[2] * scale - offset - x1, box[3] * scale - offset - y1
    if not aligned:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bh, bw = rh / ph, rw / pw
    gh = ratio if ratio > 0 else int(math.ceil(rh / ph))
    gw = ratio if ratio > 0 else int(math.ceil(rw / pw))
    pos = np.zeros((ph * pw, gh * gw, 4), np.int64)
    wt = np.zeros((ph * pw, gh * gw, 4), np.float64)
    for i in range(ph):
        for j in range(pw):
            for a in range(gh):
                y = y1 + i * bh + (a + 0.5) * bh / gh
                for b in range(gw):
                    x = x1 + j * bw + (b + 0.5) * bw / gw
                    p0, p1, p2, p3, w0, w1, w2, w3 = _corners(y, x, h, w)
                    at = i * pw + j
                    k = a * gw + b
                    pos[at, k, 0], pos[at, k, 1], pos[at, k, 2], pos[at, k, 3] = p0, p1, p2, p3
                    wt[at, k, 0], wt[at, k, 1], wt[at, k, 2], wt[at, k, 3] = w0, w1, w2, w3
    return pos, wt, max(gh * gw, 1)


@njit(cache=True)
def roi_align(x, boxes, batch, ph, pw, scale, ratio, aligned, use_max):
    """[R, C, ph, pw]: each bin's average of its bilinear samples (or ONNX's max, ``use_max``)."""
    n, c, h, w = x.shape
    flat = x.reshape(n, c, h * w)
    out = np.zeros((boxes.shape[0], c, ph, pw), x.dtype)
    for r in range(boxes.shape[0]):
        pos, wt, count = _align_points(boxes[r], scale, ph, pw, h, w, ratio, aligned)
        img = flat[batch[r]]
        for ch in range(c):
            for k in range(ph * pw):
                acc = 0.0
                for s in range(pos.shape[1]):
                    if use_max:
                        v = max(max(wt[k, s, 0] * img[ch, pos[k, s, 0]], wt[k, s, 1] * img[ch, pos[k, s, 1]]),
                                max(wt[k, s, 2] * img[ch, pos[k, s, 2]], wt[k, s, 3] * img[ch, pos[k, s, 3]]))  # fmt: skip
                        acc = v if s == 0 else max(acc, v)
                    else:
                        for q in range(4):
                            acc += wt[k, s, q] * img[ch, pos[k, s, q]]
                out[r, ch, k // pw, k % pw] = acc if use_max else acc / count
    return out


@njit(cache=True)
def roi_align_adjoint(g, boxes, batch, n, h, w, scale, ratio, aligned):
    """The gradient of the averaging ``roi_align`` in its image, [n, C, h, w]: each bin's gradient
    spread over its samples' corners with their weights, divided by the bin's point count."""
    r_count, c, ph, pw = g.shape
    out = np.zeros((n, c, h * w), g.dtype)
    for r in range(r_count):
        pos, wt, count = _align_points(boxes[r], scale, ph, pw, h, w, ratio, aligned)
        img = out[batch[r]]
        for ch in range(c):
            for k in range(ph * pw):
                share = g[r, ch, k // pw, k % pw] / count
                for s in range(pos.shape[1]):
                    for q in range(4):
                        img[ch, pos[k, s, q]] += wt[k, s, q] * share
    return out.reshape(n, c, h, w)


@njit(cache=True, inline="always")
def _round(v):
    """C's ``round``: halves away from zero (NumPy's rounds them to even)."""
    return math.copysign(math.floor(abs(v) + 0.5), v)


@njit(cache=True)
def roi_pool_argmax(x, boxes, batch, ph, pw, scale):
    """Flat index into ``x`` of each bin's maximum ([R, C, ph, pw], -1 for an empty bin): Paddle's
    ``roi_pool`` rounds the box to pixels (ends included) and splits it into ``ph`` x ``pw`` bins
    (floor of the start, ceil of the end), clipped to the image; the first maximum wins."""
    n, c, h, w = x.shape
    flat = x.reshape(-1)
    out = np.full((boxes.shape[0], c, ph, pw), -1, np.int64)
    for r in range(boxes.shape[0]):
        xs, ys = int(_round(boxes[r, 0] * scale)), int(_round(boxes[r, 1] * scale))
        xe, ye = int(_round(boxes[r, 2] * scale)), int(_round(boxes[r, 3] * scale))
        bh, bw = max(ye - ys + 1, 1) / ph, max(xe - xs + 1, 1) / pw
        for i in range(ph):
            h0 = min(max(int(math.floor(i * bh)) + ys, 0), h)
            h1 = min(max(int(math.ceil((i + 1) * bh)) + ys, 0), h)
            for j in range(pw):
                w0 = min(max(int(math.floor(j * bw)) + xs, 0), w)
                w1 = min(max(int(math.ceil((j + 1) * bw)) + xs, 0), w)
                for ch in range(c):
                    base = (batch[r] * c + ch) * h * w
                    for y in range(h0, h1):
                        for z in range(w0, w1):
                            at = base + y * w + z
                            if out[r, ch, i, j] < 0 or flat[at] > flat[out[r, ch, i, j]]:
                                out[r, ch, i, j] = at
    return out


@njit(cache=True, inline="always")
def _ps_bin(box, scale, i, j, ph, pw, h, w):
    """Pixel bounds [h0, h1) x [w0, w1) of bin (i, j) of one RoI in ``psroi_pool``: the box's
    corners rounded to pixels (the end included), scaled, split evenly, floor/ceil, clipped."""
    xs, ys = _round(box[0]) * scale, _round(box[1]) * scale
    xe, ye = (_round(box[2]) + 1.0) * scale, (_round(box[3]) + 1.0) * scale
    bh, bw = max(ye - ys, 0.1) / ph, max(xe - xs, 0.1) / pw
    h0 = min(max(int(math.floor(bh * i + ys)), 0), h)
    h1 = min(max(int(math.ceil(bh * (i + 1) + ys)), 0), h)
    w0 = min(max(int(math.floor(bw * j + xs)), 0), w)
    w1 = min(max(int(math.ceil(bw * (j + 1) + xs)), 0), w)
    return h0, h1, w0, w1


@njit(cache=True)
def psroi_pool(x, boxes, batch, ph, pw, scale):
    """[R, C / (ph * pw), ph, pw]: bin (i, j) of output channel ``o`` averages input channel
    ``(o * ph + i) * pw + j`` over the bin (0 for an empty bin)."""
    n, c, h, w = x.shape
    oc = c // (ph * pw)
    out = np.zeros((boxes.shape[0], oc, ph, pw), x.dtype)
    for r in range(boxes.shape[0]):
        for i in range(ph):
            for j in range(pw):
                h0, h1, w0, w1 = _ps_bin(boxes[r], scale, i, j, ph, pw, h, w)
                if h1 <= h0 or w1 <= w0:
                    continue
                for o in range(oc):
                    acc = 0.0
                    for y in range(h0, h1):
                        for z in range(w0, w1):
                            acc += x[batch[r], (o * ph + i) * pw + j, y, z]
                    out[r, o, i, j] = acc / ((h1 - h0) * (w1 - w0))
    return out


@njit(cache=True)
def psroi_pool_adjoint(g, boxes, batch, n, c, h, w, scale):
    """The gradient of ``psroi_pool`` in its image: each bin's gradient shared evenly over its pixels."""
    r_count, oc, ph, pw = g.shape
    out = np.zeros((n, c, h, w), g.dtype)
    for r in range(r_count):
        for i in range(ph):
            for j in range(pw):
                h0, h1, w0, w1 = _ps_bin(boxes[r], scale, i, j, ph, pw, h, w)
                if h1 <= h0 or w1 <= w0:
                    continue
                area = (h1 - h0) * (w1 - w0)
                for o in range(oc):
                    share = g[r, o, i, j] / area
                    out[batch[r], (o * ph + i) * pw + j, h0:h1, w0:w1] += share
    return out
