"""Export rules of the FFT ops and the complex views, for programs whose complex values stay inside
(the ONNX DFT import makes such programs): ONNX carries a complex tensor as a real one with a
trailing (real, imag) axis, its DFT's convention, so ``as_complex``/``as_real`` are that tensor
itself, a real-to-complex ``cast`` appends a zero imaginary part, ``pad`` leaves the pair axis
alone, a complex constant is its pairs, and the ``fft_*`` ops are DFT nodes along each axis (ONNX's
forward is unscaled, its inverse by ``1/n``; each op's norm is one scale after). ``fft_c2r``
rebuilds the full spectrum from its one-sided half (the conjugate mirror) and keeps the real part.
A complex graph input or output, and an op outside ``PAIR_OPS`` on complex values, have no such
form (``export.py`` refuses them)."""

from __future__ import annotations

import numpy as np

from ..core.dtype import real_of
from .emitters import emits

PAIR_OPS = frozenset({"as_complex", "as_real", "fft_c2c", "fft_r2c", "fft_c2r", "cast", "pad", "getitem", "squeeze",
                      "unsqueeze", "add", "subtract"})  # fmt: skip
"""The ops whose export rules are right on complex values written as (real, imag) pairs: these
views and transforms, and the ops that act on both parts alike along the leading axes. The
exporter refuses any other op on a complex value by name (a product of pairs is no complex product)."""


def as_pairs(array: np.ndarray) -> np.ndarray:
    """A complex constant as its (real, imag) pairs; any other array as it is."""
    return np.stack([array.real, array.imag], axis=-1) if array.dtype.kind == "c" else array


def _conj(e, x: str, dtype) -> str:
    return e.node("Mul", [x, e.const(np.array([1, -1], dtype), "conj")])[0]


def _dft(e, x: str, axis: int, inverse: bool = False, onesided: bool = False) -> str:
    """ONNX's DFT of pairs ``x`` along ``axis``: unscaled forward, ``1/n`` inverse (opset 20 took the
    axis as an input)."""
    flags = {"inverse": int(inverse), "onesided": int(onesided)}
    if e.opset >= 20:
        return e.node("DFT", [x, "", e.const(np.array(axis, np.int64), "axis")], **flags)[0]
    return e.node("DFT", [x], axis=axis, **flags)[0]


def _transform(e, x: str, axes, forward: bool, first_onesided: bool = False) -> str:
    """ONNX's transform of pairs ``x`` over ``axes``; ``first_onesided``: a forward one over a real
    ``[..., 1]`` input, one-sided along the last axis, which goes first."""
    ordered = [axes[-1], *axes[:-1]] if first_onesided else list(axes)
    for k, axis in enumerate(ordered):
        x = _dft(e, x, axis, inverse=not forward, onesided=first_onesided and k == 0)
    return x


_POWER = {(True, "backward"): 0.0, (True, "ortho"): -0.5, (True, "forward"): -1.0,
          (False, "backward"): 0.0, (False, "ortho"): 0.5, (False, "forward"): 1.0}  # fmt: skip
"""(forward, norm) -> the power of n that scales ONNX's transform (forward unscaled, inverse 1/n)
to the op's norm."""


def _scaled(e, x: str, n: int, power: float, dtype, out) -> None:
    if power == 0.0:
        e.node("Identity", [x], out)
        return
    e.node("Mul", [x, e.const(np.array(float(n) ** power, dtype), "norm")], out)


def _length(op, axes, sizes=None) -> int:
    shape = op.inputs[0].shape
    return int(np.prod([shape[a] for a in axes] if sizes is None else sizes))


@emits("as_complex", "as_real")
def _pairs(e, op, ins, out):
    e.node("Identity", ins, out)


@emits("fft_c2c")
def _c2c(e, op, ins, out, axes, norm, forward):
    dtype = real_of(op.inputs[0].dtype)
    _scaled(e, _transform(e, ins[0], axes, forward), _length(op, axes), _POWER[forward, norm], dtype, out)


@emits("fft_r2c")
def _r2c(e, op, ins, out, axes, norm, forward, onesided):
    """A real input is one ``[..., 1]`` pair; its inverse transform is the conjugate of the forward
    (unscaled: one power of n below ONNX's inverse)."""
    dtype = op.inputs[0].dtype
    (x,) = e.node("Unsqueeze", [ins[0], e.const(np.array([-1], np.int64), "axes")])
    x = _transform(e, x, axes, True, first_onesided=onesided)
    power = _POWER[forward, norm] - (0.0 if forward else 1.0)
    _scaled(e, x if forward else _conj(e, x, dtype), _length(op, axes), power, dtype, out)


@emits("fft_c2r")
def _c2r(e, op, ins, out, axes, norm, forward, last_dim_size):
    """The inverse transform over the other axes, then over the last one of its full spectrum (the
    one-sided half and its conjugate mirror); the real part. ``forward`` transforms the conjugate."""
    dtype = real_of(op.inputs[0].dtype)
    last, size = axes[-1], int(last_dim_size)
    x = ins[0] if not forward else _conj(e, ins[0], dtype)  # irfft of the conjugate, scaled as the inverse
    if len(axes) > 1:  # the other axes first, as irfftn: then each last-axis row is one half spectrum
        x = _transform(e, x, axes[:-1], False)
    mirrored = size - (size // 2 + 1)  # bins size-1 .. size//2+1 are the conjugates of bins 1 .. mirrored
    if mirrored:
        consts = [e.const(np.array([v], np.int64), n) for v, n in ((mirrored, "starts"), (0, "ends"), (last, "axes"),
                                                                    (-1, "steps"))]  # fmt: skip
        (mirror,) = e.node("Slice", [x, *consts])
        (x,) = e.node("Concat", [x, _conj(e, mirror, dtype)], axis=last)
    x = _transform(e, x, [last], False)
    (real,) = e.node("Gather", [x, e.const(np.array(0, np.int64), "real")], axis=-1)
    sizes = [op.inputs[0].shape[a] for a in axes[:-1]] + [size]
    _scaled(e, real, _length(op, axes, sizes), _POWER[False, _swap(norm) if forward else norm], dtype, out)


def _swap(norm: str) -> str:
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]
