"""Discrete Fourier transforms: Paddle's three ops, ``fft_c2c`` (complex to complex), ``fft_r2c``
(real to complex, one-sided or full) and ``fft_c2r`` (one-sided complex to real), each over a tuple
of axes, and the ``paddle.fft`` functions built on them (and ``paddle.signal``'s STFT).

Every op takes ``forward`` (the sign of the exponent: ``e^-i`` forward, ``e^+i`` backward) and
Paddle's ``norm`` (which direction carries ``1/n``: "backward" scales the inverse, "forward" the
forward, "ortho" both by ``1/sqrt(n)``). The adjoint of a transform is the transform in the other
direction with the same scale, i.e. with "backward" and "forward" swapped, which is what every vjp
here calls; ``fft_r2c``'s and ``fft_c2r``'s are each other's (the one-sided spectrum's inner bins
stand for two, so ``fft_c2r``'s gradient doubles them). pocketfft (NumPy) runs the transforms and
keeps complex64/float32 at single precision."""

from __future__ import annotations

import numpy as np

from ..core.dtype import complex_of, is_floating, real_of
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axis
from ..errors import ConfigError, DTypeError, ShapeError
from ._util import constant
from .complex import real_op
from .elementwise import cast_op
from .shape import pad_op, roll_op

NORMS = ("backward", "ortho", "forward")
_ADJOINT = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swap(norm: str) -> str:
    return _ADJOINT[norm]


def _complex_sample(rng, shape):
    return rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)


# ----- complex to complex ----------------------------------------------------------------------


def _c2c_forward(ctx, x, axes, norm, forward):
    return (np.fft.fftn if forward else np.fft.ifftn)(x, axes=axes, norm=norm)


def _c2c_vjp(ctx, g):
    a = ctx.attrs
    return fft_c2c_op(g, axes=a["axes"], norm=_swap(a["norm"]), forward=not a["forward"])


fft_c2c_op = OpDef(
    "fft_c2c",
    _c2c_forward,
    _c2c_vjp,
    lambda x, axes, norm, forward: Spec(x.shape, complex_of(np.dtype(x.dtype))),
    OPAQUE,
    samples=lambda rng: [
        Sample((_complex_sample(rng, (3, 4)),), {"axes": (1,), "norm": "backward", "forward": True}),
        Sample((_complex_sample(rng, (3, 4, 5)),), {"axes": (0, 2), "norm": "ortho", "forward": False}),
    ],
)

# ----- real to complex -------------------------------------------------------------------------


def _r2c_forward(ctx, x, axes, norm, forward, onesided):
    if not onesided:
        return _c2c_forward(ctx, x, axes, norm, forward)
    if forward:
        return np.fft.rfftn(x, axes=axes, norm=norm)
    return np.conj(np.fft.rfftn(x, axes=axes, norm=_swap(norm)))  # e^+i: the conjugate of e^-i on real x


def _r2c_vjp(ctx, g):
    """The real part of the adjoint transform of ``g`` zero-filled to the full last axis."""
    a, x = ctx.attrs, ctx.input(0)
    if a["onesided"]:
        last = a["axes"][-1]
        pads = tuple((0, x.shape[last] - g.shape[last]) if i == last else (0, 0) for i in range(x.ndim))
        g = pad_op(g, pads=pads, mode="constant", value=0.0)
    return real_op(fft_c2c_op(g, axes=a["axes"], norm=_swap(a["norm"]), forward=not a["forward"]))


def _r2c_infer(x: Spec, axes, norm, forward, onesided) -> Spec:
    shape = list(x.shape)
    if onesided:
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return Spec(tuple(shape), complex_of(np.dtype(x.dtype)))


fft_r2c_op = OpDef(
    "fft_r2c",
    _r2c_forward,
    _r2c_vjp,
    _r2c_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.uniform(-2, 2, (3, 6)),), {"axes": (1,), "norm": "backward", "forward": True, "onesided": True}),
        Sample((rng.uniform(-2, 2, (3, 5)),), {"axes": (0, 1), "norm": "ortho", "forward": False, "onesided": True}),
        Sample((rng.uniform(-2, 2, (3, 4)),), {"axes": (1,), "norm": "forward", "forward": True, "onesided": False}),
    ],
)

# ----- complex to real -------------------------------------------------------------------------


def _c2r_forward(ctx, x, axes, norm, forward, last_dim_size):
    if x.shape[axes[-1]] != last_dim_size // 2 + 1:
        raise ShapeError(
            f"fft_c2r: axis {axes[-1]} of x{list(x.shape)} must hold last_dim_size // 2 + 1 = "
            f"{last_dim_size // 2 + 1} bins for {last_dim_size} outputs"
        )
    s = [x.shape[a] for a in axes[:-1]] + [last_dim_size]
    if forward:  # e^-i: irfft of the conjugate, with the forward direction's scale
        return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=_swap(norm))
    return np.fft.irfftn(x, s=s, axes=axes, norm=norm)


def _c2r_vjp(ctx, g):
    """The one-sided adjoint transform of ``g``, its inner bins doubled: each stands for itself and
    for its conjugate mirror, which the inverse transform reads too."""
    a, x = ctx.attrs, ctx.input(0)
    last, n = a["axes"][-1], a["last_dim_size"]
    gx = fft_r2c_op(g, axes=a["axes"], norm=_swap(a["norm"]), forward=not a["forward"], onesided=True)
    bins = x.shape[last]
    weight = np.ones(bins)
    weight[1 : n - bins + 1] = 2.0
    return gx * constant(weight.reshape((bins,) + (1,) * (x.ndim - 1 - last)).astype(real_of(x.dtype)))


def _c2r_infer(x: Spec, axes, norm, forward, last_dim_size) -> Spec:
    shape = list(x.shape)
    shape[axes[-1]] = last_dim_size
    return Spec(tuple(shape), real_of(np.dtype(x.dtype)))


fft_c2r_op = OpDef(
    "fft_c2r",
    _c2r_forward,
    _c2r_vjp,
    _c2r_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample(
            (_complex_sample(rng, (3, 4)),), {"axes": (1,), "norm": "backward", "forward": False, "last_dim_size": 6}
        ),
        Sample((_complex_sample(rng, (3, 4)),), {"axes": (0, 1), "norm": "ortho", "forward": True, "last_dim_size": 7}),
    ],
)

# ----- the paddle.fft functions ----------------------------------------------------------------


def _norm(op: str, norm) -> str:
    if norm not in NORMS:
        raise ConfigError(f"{op}: norm must be one of {', '.join(NORMS)}, got {norm!r}")
    return norm


def _as_complex(x):
    """Paddle's promotion for a complex transform: integers to the default float, reals to complex."""
    if x.dtype.kind == "c":
        return x
    return cast_op(x, dtype=complex_of(x.dtype if is_floating(x.dtype) else np.dtype("float32")).name)


def _as_real(op: str, x):
    if x.dtype.kind == "c":
        raise DTypeError(f"{op}: x must be real, got {x.dtype.name}; use the complex transform (fft/fftn) instead")
    if is_floating(x.dtype) and x.dtype.itemsize >= 4:
        return x
    return cast_op(x, dtype="float32")


def _axes(op: str, x, s, axes) -> tuple[tuple[int, ...], tuple | None]:
    """Normalised axes and sizes: all axes by default, the last ``len(s)`` when only ``s`` is given."""
    if s is not None:
        s = tuple(int(n) for n in ([s] if isinstance(s, int) else s))
        if any(n < 1 for n in s):
            raise ShapeError(f"{op}: every signal size must be >= 1, got s={list(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    axes = tuple(normalize_axis(op, int(a), x.ndim) for a in ([axes] if isinstance(axes, int) else axes))
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: axes {list(axes)} repeat an axis")
    if not axes:
        raise ShapeError(f"{op}: needs at least one axis to transform, x has shape {x.shape}")
    if s is not None and len(s) != len(axes):
        raise ShapeError(f"{op}: s={list(s)} and axes={list(axes)} must have the same length")
    return axes, s


def _resize(x, axes, sizes):
    """Zero-pad or truncate ``x`` to ``sizes`` along ``axes`` (Paddle's ``n``/``s``)."""
    if sizes is None:
        return x
    want = dict(zip(axes, sizes, strict=True))
    if all(x.shape[a] == want.get(a, x.shape[a]) for a in range(x.ndim)):
        return x
    pads = tuple((0, want[a] - x.shape[a]) if a in want else (0, 0) for a in range(x.ndim))
    return pad_op(x, pads=pads, mode="constant", value=0.0)


def _c2c(op, x, s, axes, norm, forward):
    axes, s = _axes(op, x, s, axes)
    x = _resize(_as_complex(x), axes, s)
    return fft_c2c_op(x, axes=axes, norm=_norm(op, norm), forward=forward)


def _r2c(op, x, s, axes, norm, forward):
    axes, s = _axes(op, x, s, axes)
    x = _resize(_as_real(op, x), axes, s)
    return fft_r2c_op(x, axes=axes, norm=_norm(op, norm), forward=forward, onesided=True)


def _c2r(op, x, s, axes, norm, forward):
    """The inverse of a one-sided transform: ``s[-1]`` real outputs (default ``2 * (bins - 1)``)
    from the first ``s[-1] // 2 + 1`` bins of the last axis."""
    axes, s = _axes(op, x, s, axes)
    last = s[-1] if s is not None else 2 * (x.shape[axes[-1]] - 1)
    if last < 1:
        raise ShapeError(f"{op}: {x.shape[axes[-1]]} bins on axis {axes[-1]} make no output; give n (or s)")
    sizes = (*(s[:-1] if s is not None else [x.shape[a] for a in axes[:-1]]), last // 2 + 1)
    x = _resize(_as_complex(x), axes, sizes)
    return fft_c2r_op(x, axes=axes, norm=_norm(op, norm), forward=forward, last_dim_size=last)


def _one(n, axis):
    return None if n is None else [n], [axis]


def fft(x, n=None, axis=-1, norm="backward", name=None):
    return _c2c("fft", x, *_one(n, axis), norm, True)


def ifft(x, n=None, axis=-1, norm="backward", name=None):
    return _c2c("ifft", x, *_one(n, axis), norm, False)


def rfft(x, n=None, axis=-1, norm="backward", name=None):
    return _r2c("rfft", x, *_one(n, axis), norm, True)


def irfft(x, n=None, axis=-1, norm="backward", name=None):
    return _c2r("irfft", x, *_one(n, axis), norm, False)


def hfft(x, n=None, axis=-1, norm="backward", name=None):
    return _c2r("hfft", x, *_one(n, axis), norm, True)


def ihfft(x, n=None, axis=-1, norm="backward", name=None):
    return _r2c("ihfft", x, *_one(n, axis), norm, False)


def fftn(x, s=None, axes=None, norm="backward", name=None):
    return _c2c("fftn", x, s, axes, norm, True)


def ifftn(x, s=None, axes=None, norm="backward", name=None):
    return _c2c("ifftn", x, s, axes, norm, False)


def rfftn(x, s=None, axes=None, norm="backward", name=None):
    return _r2c("rfftn", x, s, axes, norm, True)


def irfftn(x, s=None, axes=None, norm="backward", name=None):
    return _c2r("irfftn", x, s, axes, norm, False)


def hfftn(x, s=None, axes=None, norm="backward", name=None):
    return _c2r("hfftn", x, s, axes, norm, True)


def ihfftn(x, s=None, axes=None, norm="backward", name=None):
    return _r2c("ihfftn", x, s, axes, norm, False)


def _two(op: str, fn, x, s, axes, norm):
    if len(axes) != 2 or (s is not None and len(s) != 2):
        raise ShapeError(f"{op}: needs exactly two axes (and two sizes in s), got axes={list(axes)}, s={s}")
    return fn(x, s, axes, norm)


def fft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    return _two("fft2", fftn, x, s, axes, norm)


def ifft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    return _two("ifft2", ifftn, x, s, axes, norm)


def rfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    return _two("rfft2", rfftn, x, s, axes, norm)


def irfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    return _two("irfft2", irfftn, x, s, axes, norm)


def hfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    return _two("hfft2", hfftn, x, s, axes, norm)


def ihfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    return _two("ihfft2", ihfftn, x, s, axes, norm)


def _freq_args(op: str, n, d):
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 1:
        raise ConfigError(f"{op}: n must be a positive int, got {n!r}")
    if d == 0:
        raise ConfigError(f"{op}: the sample spacing d must be non-zero")


def fftfreq(n, d=1.0, dtype=None, name=None):
    """The ``n`` sample frequencies of a DFT with spacing ``d``: ``[0, 1, ..., -1] / (d * n)``."""
    _freq_args("fftfreq", n, d)
    return constant(np.fft.fftfreq(int(n), d=float(d)), dtype or "float32")


def rfftfreq(n, d=1.0, dtype=None, name=None):
    """The ``n // 2 + 1`` non-negative sample frequencies of a one-sided DFT."""
    _freq_args("rfftfreq", n, d)
    return constant(np.fft.rfftfreq(int(n), d=float(d)), dtype or "float32")


def _shift(op: str, x, axes, sign: int):
    axes = tuple(range(x.ndim)) if axes is None else ([axes] if isinstance(axes, int) else list(axes))
    axes = tuple(normalize_axis(op, int(a), x.ndim) for a in axes)
    return roll_op(x, shifts=tuple(sign * (x.shape[a] // 2) for a in axes), axis=axes)


def fftshift(x, axes=None, name=None):
    """Move the zero frequency to the centre (a roll by ``n // 2`` along each axis)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None, name=None):
    """``fftshift``'s inverse (a roll by ``-(n // 2)``)."""
    return _shift("ifftshift", x, axes, -1)


FFT = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip
