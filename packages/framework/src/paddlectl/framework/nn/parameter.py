"""``paddle.create_parameter``: a Parameter made outside any model, by the rules a Layer makes its own.

It lives beside ``Layer`` (the nn layer), not among the ops: it builds state, computes nothing."""

from __future__ import annotations

import copy

from .layer.base import Layer, ParamAttr


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    """A free-standing Parameter, initialised as a layer's would be (``paddle.create_parameter``)."""
    attr = copy.copy(ParamAttr.resolve(attr) or ParamAttr())
    if name is not None and attr.name is None:
        attr.name = name
    return Layer("create_parameter", dtype=dtype).create_parameter(shape, attr, dtype, is_bias, default_initializer)
