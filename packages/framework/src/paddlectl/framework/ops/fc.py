"""``fc``: ``act(x @ W + b)`` against a weight packed once for ``kernels.gemm``'s micro-kernel (as
Paddle's inference ``fc`` op), made by the ``fuse_fc`` pass from a matmul by a known float32
weight, the bias add and the relu or gelu after it. No gradient: it serves predictors, whose
weights are constants."""

from __future__ import annotations

import math

import numpy as np

from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import DTypeError, ShapeError
from ..kernels import gemm
from ..kernels.background import with_reference
from ..kernels.conv_select import product_threads
from ..kernels.fastmath import erf_array

ACTIVATIONS = ("", "relu", "gelu")
"""Indexed by ``kernels.gemm``'s activation codes (``RELU``, ``GELU``); gelu is the exact (erf) one."""


def _unpacked(x: np.ndarray, packed: np.ndarray, n: int, act: int) -> np.ndarray:
    """``_fc`` by NumPy from the packed panels (``kernels.background``: while the kernel compiles)."""
    table = packed.transpose(1, 0, 2).reshape(packed.shape[1], -1)[:, :n]  # row 0 the bias, then [K, N]
    out = (x.reshape(-1, table.shape[0] - 1) @ table[1:] + table[0]).astype(np.float32)
    if act == gemm.RELU:
        out = np.maximum(out, np.float32(0))
    elif act == gemm.GELU:
        out = np.float32(0.5) * out * (np.float32(1.0) + erf_array(out * np.float32(1.0 / math.sqrt(2.0))))
    return out.reshape(*x.shape[:-1], n)


@with_reference(_unpacked)
def _fc(x: np.ndarray, packed: np.ndarray, n: int, act: int) -> np.ndarray:
    rows = x.reshape(-1, packed.shape[1] - 1)
    if rows.strides[1] != rows.itemsize:
        rows = np.ascontiguousarray(rows)
    out = np.empty((rows.shape[0], n), np.float32)
    threads = product_threads(rows.size * n)
    block, chunks = gemm.split(rows.shape[0], rows.shape[1], threads)
    gemm.fc.run(threads > 1, rows, packed, n, act, out, block, chunks)
    return out.reshape(*x.shape[:-1], n)


def _fc_forward(ctx, x, packed, n, activation=""):
    return _fc(x, packed, n, ACTIVATIONS.index(activation))


def _fc_infer(x: Spec, packed: Spec, n, activation="") -> Spec:
    if np.dtype(x.dtype) != np.float32 or np.dtype(packed.dtype) != np.float32:
        raise DTypeError(f"fc: x and the packed weight must be float32, got {x.dtype} and {packed.dtype}")
    k = x.shape[-1] if x.shape else None
    panels = packed.shape[0]
    if len(packed.shape) != 3 or packed.shape[2] != gemm.NR or (isinstance(panels, int) and panels * gemm.NR < n):
        raise ShapeError(
            f"fc: the packed weight must be [panels, K + 1, {gemm.NR}] holding {n} columns (kernels.gemm.pack on "
            f"this CPU), got {list(packed.shape)}; repack the [K, N] weight with kernels.gemm.pack"
        )
    if k is None or (isinstance(k, int) and isinstance(packed.shape[1], int) and k + 1 != packed.shape[1]):
        raise ShapeError(f"fc: x{list(x.shape)}'s last dim must be K = {packed.shape[1]} - 1 of the packed weight")
    if activation not in ACTIVATIONS:
        raise ValueError(f"fc: activation must be one of {ACTIVATIONS}, got {activation!r}")
    return Spec((*x.shape[:-1], n), x.dtype)


def _fc_samples(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    packed = gemm.pack(rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal(5).astype(np.float32))
    return [Sample((x, packed), {"n": 5, "activation": activation}) for activation in ACTIVATIONS]


fc_op = OpDef("fc", _fc_forward, None, _fc_infer, OPAQUE, samples=_fc_samples, items=True)


@lowering("fc")
def _fc_lowering(attrs, in_types, out_types):
    n, act = attrs["n"], ACTIVATIONS.index(attrs.get("activation", ""))
    return lambda x, packed: _fc(x, packed, n, act)
