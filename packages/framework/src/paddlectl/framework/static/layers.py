"""``paddle.static.nn`` layers: functions that create their parameters where they are called (in
static mode, in the main program) and apply them once."""

from __future__ import annotations

import math

from ..nn import functional as F
from ..nn.layer.common import Linear
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
