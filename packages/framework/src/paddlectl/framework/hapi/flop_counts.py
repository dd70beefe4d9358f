"""Each op's flop count, stored in its record (``REGISTRY[name].flops``) by ``counts``, and the count
of a whole program.

``flops(in_specs, out_specs, attrs)`` returns the multiply-accumulates of one call at those
(concrete) shapes, by Paddle's counting rules (``paddle.hapi.dynamic_flops``): a convolution
counts its bias as one more per output, a matmul does not count the add a Linear puts after it.
Ops without a rule count zero, as Paddle's unlisted layers do. The rules live here, on the side
that reads them, because ops must not import hapi; they fill the records when hapi loads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import ops  # noqa: F401 - declares the ops whose records this module fills
from ..core import symbolic
from ..core.op import REGISTRY, Spec


def counts(*names: str):
    """Decorator storing ``flops(in_specs, out_specs, attrs)`` in the records of the ops ``names``."""

    def register(rule: Callable) -> Callable:
        for name in names:
            REGISTRY[name].flops = rule
        return rule

    return register


def _numel(spec: Spec) -> int:
    return int(np.prod(spec.shape, dtype=np.int64))


@counts("conv2d", "conv2d_transpose")
def _conv(in_specs, out_specs, attrs) -> int:
    """Paddle's ``count_convNd``: per output, input channels per group times the window, plus the bias."""
    x, w, bias = (*in_specs, None)[:3]
    window = int(np.prod(w.shape[2:]))
    return abs(int(_numel(out_specs[0]) * (x.shape[1] / attrs.get("groups", 1) * window + (bias is not None))))


@counts("matmul")
def _matmul(in_specs, out_specs, attrs) -> int:
    """Paddle's ``count_linear``: the contracted size per output."""
    x = in_specs[0].shape
    inner = x[-2] if attrs.get("transpose_x") and len(x) > 1 else x[-1]
    return int(inner) * _numel(out_specs[0])


@counts("batch_norm")
def _batch_norm(in_specs, out_specs, attrs) -> int:
    """Paddle's ``count_bn``: a scale and a shift per element."""
    return 2 * _numel(in_specs[0])


@counts("leaky_relu")
def _leaky_relu(in_specs, out_specs, attrs) -> int:
    return _numel(in_specs[0])


@counts("avg_pool2d")
def _avg_pool(in_specs, out_specs, attrs) -> int:
    """The window's adds and one divide per output (Paddle's ``count_adap_avgpool``; an adaptive
    pool's window is the input size over the output size). ``paddle.flops`` counts plain average
    pooling layers as zero, as Paddle does, by not counting those layers."""
    if attrs.get("output_size") is not None:
        window = np.array(in_specs[0].shape[2:]) // np.array(out_specs[0].shape[2:])
    else:
        window = np.array(attrs["kernel_size"])
    return (int(np.prod(window)) + 1) * _numel(out_specs[0])


def program_flops(program, bindings: dict | None = None) -> int:
    """The summed flop counts of ``program``'s ops at the symbol sizes ``bindings`` (a program
    traced at concrete sizes needs none)."""

    def spec(value):
        shape = tuple(symbolic.evaluate(d, bindings or {}) if isinstance(d, str) else d for d in value.shape)
        return Spec(shape, value.dtype)

    total = 0
    for op in program.walk():
        record = REGISTRY.get(op.name)
        if record is not None and record.flops is not None:
            ins = [None if v is None else spec(v) for v in op.inputs]
            total += record.flops(ins, [spec(v) for v in op.outputs], op.attrs)
    return total
