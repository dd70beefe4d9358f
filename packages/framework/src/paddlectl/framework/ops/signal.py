"""``paddle.signal``: the short-time Fourier transform and its inverse, as Paddle computes them:
frames of the (centre-padded) signal, windowed, through ``fft_r2c``/``fft_c2c`` (ops/fft.py); back
through ``fft_c2r``/``fft_c2c``, windowed again, overlap-added and divided by the overlap-added
squared window. Framing and overlap-adding are ops of their own, each the other's transpose."""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.dtype import is_floating, real_of
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.state import STATE
from ..core.symbolic import is_symbol
from ..errors import ConfigError, DataError, DTypeError, ShapeError
from ._util import constant
from .fft import fft_c2c_op, fft_c2r_op, fft_r2c_op
from .shape import pad_op, squeeze_op, transpose_op, unsqueeze_op


def _frame_count(length: int, frame_length: int, hop_length: int) -> int:
    return 1 + (length - frame_length) // hop_length


def _frame_forward(ctx, x, frame_length, hop_length):
    windows = np.lib.stride_tricks.sliding_window_view(x, frame_length, axis=-1)[..., ::hop_length, :]
    return np.ascontiguousarray(np.swapaxes(windows, -1, -2))


def _frame_infer(x: Spec, frame_length, hop_length) -> Spec:
    n = x.shape[-1]
    frames = symbolic.simplify(f"({n}-{frame_length})//{hop_length}+1") if is_symbol(n) else None
    return Spec((*x.shape[:-1], frame_length, frames or _frame_count(n, frame_length, hop_length)), x.dtype)


frame_op = OpDef(
    "frame",
    _frame_forward,
    lambda ctx, g: overlap_add_op(g, hop_length=ctx.attrs["hop_length"], length=ctx.input(0).shape[-1]),
    _frame_infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.uniform(-2, 2, (2, 11)),), {"frame_length": 4, "hop_length": 3})],
)
"""``(..., T)`` to ``(..., frame_length, frames)``: frame ``j`` holds samples ``j * hop`` onwards."""


def _overlap_add_forward(ctx, x, hop_length, length):
    frame_length, frames = x.shape[-2:]
    out = np.zeros((*x.shape[:-2], length), dtype=x.dtype)
    for j in range(frames):
        out[..., j * hop_length : j * hop_length + frame_length] += x[..., :, j]
    return out


def _overlap_add_infer(x: Spec, hop_length, length) -> Spec:
    return Spec((*x.shape[:-2], length), x.dtype)


overlap_add_op = OpDef(
    "overlap_add",
    _overlap_add_forward,
    lambda ctx, g: frame_op(g, frame_length=ctx.input(0).shape[-2], hop_length=ctx.attrs["hop_length"]),
    _overlap_add_infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.uniform(-2, 2, (2, 4, 3)),), {"hop_length": 3, "length": 11})],
)
"""``(..., frame_length, frames)`` to ``(..., length)``: each frame added back at ``j * hop``
(``length`` at least ``(frames - 1) * hop + frame_length``; the rest is zeros)."""


def _defaults(op: str, n_fft, hop_length, win_length):
    if not isinstance(n_fft, int | np.integer) or n_fft < 1:
        raise ConfigError(f"{op}: n_fft must be a positive int, got {n_fft!r}")
    hop_length = n_fft // 4 if hop_length is None else int(hop_length)
    win_length = n_fft if win_length is None else int(win_length)
    if hop_length < 1:
        raise ConfigError(f"{op}: hop_length must be > 0, got {hop_length}")
    if not 0 < win_length <= n_fft:
        raise ConfigError(f"{op}: win_length must be in (0, n_fft={n_fft}], got {win_length}")
    return int(n_fft), hop_length, win_length


def _window(op: str, window, win_length: int, n_fft: int, dtype):
    """The window (ones by default) centred in ``n_fft`` taps."""
    if window is None:
        window = constant(np.ones(win_length, dtype=dtype))
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise ShapeError(f"{op}: window must be 1-D of size win_length={win_length}, got shape {window.shape}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = pad_op(window, pads=((left, n_fft - win_length - left),), mode="constant", value=0.0)
    return window


def stft(
    x, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect", normalized=False,
    onesided=None, name=None,
):  # fmt: skip
    """``(T,)`` or ``(B, T)`` signals to ``(B, n_fft // 2 + 1 or n_fft, frames)`` complex spectra."""
    if x.ndim not in (1, 2):
        raise ShapeError(f"stft: x must be 1-D or 2-D (batch, seq_length), got shape {x.shape}")
    if not (is_floating(x.dtype) or x.dtype.kind == "c") or x.dtype.itemsize < 4:
        raise DTypeError(f"stft: x must be float32/float64/complex64/complex128, got {x.dtype.name}")
    n_fft, hop_length, win_length = _defaults("stft", n_fft, hop_length, win_length)
    batched = x if x.ndim == 2 else unsqueeze_op(x, axes=(0,))
    if not 0 < n_fft <= batched.shape[-1]:
        raise ShapeError(f"stft: n_fft must be in (0, seq_length={batched.shape[-1]}], got {n_fft}")
    window = _window("stft", window, win_length, n_fft, x.dtype)
    if center:
        if pad_mode not in ("constant", "reflect"):
            raise ConfigError(f"stft: pad_mode must be 'reflect' or 'constant', got {pad_mode!r}")
        half = n_fft // 2
        batched = pad_op(batched, pads=((0, 0), (half, half)), mode=pad_mode, value=0.0)
    frames = transpose_op(frame_op(batched, frame_length=n_fft, hop_length=hop_length), perm=(0, 2, 1)) * window
    norm = "ortho" if normalized else "backward"
    is_complex = frames.dtype.kind == "c"
    onesided = not is_complex if onesided is None else bool(onesided)
    if is_complex and onesided:
        raise ConfigError("stft: onesided must be False for a complex input or window")
    if is_complex:
        out = fft_c2c_op(frames, axes=(2,), norm=norm, forward=True)
    else:
        out = fft_r2c_op(frames, axes=(2,), norm=norm, forward=True, onesided=onesided)
    out = transpose_op(out, perm=(0, 2, 1))
    return out if x.ndim == 2 else squeeze_op(out, axes=(0,))


def istft(
    x, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=True,
    length=None, return_complex=False, name=None,
):  # fmt: skip
    """``stft``'s inverse: ``(B, bins, frames)`` spectra back to ``(B, T)`` signals (least squares)."""
    if x.ndim not in (2, 3):
        raise ShapeError(f"istft: x must be 2-D or 3-D (batch, fft_size, frames), got shape {x.shape}")
    if x.dtype.kind != "c":
        raise DTypeError(f"istft: x must be a complex spectrum (complex64/complex128), got {x.dtype.name}")
    n_fft, hop_length, win_length = _defaults("istft", n_fft, hop_length, win_length)
    batched = x if x.ndim == 3 else unsqueeze_op(x, axes=(0,))
    bins, frames = batched.shape[-2:]
    if bins != (n_fft // 2 + 1 if onesided else n_fft) or frames == 0:
        want = "n_fft // 2 + 1" if onesided else "n_fft"
        raise ShapeError(f"istft: with onesided={onesided}, x{x.shape} must hold {want} bins for n_fft={n_fft}")
    window = _window("istft", window, win_length, n_fft, real_of(x.dtype))
    if return_complex and onesided:
        raise ConfigError("istft: return_complex=True needs onesided=False (a one-sided spectrum is of a real signal)")
    if window.dtype.kind == "c" and not return_complex:
        raise DTypeError("istft: a complex window needs return_complex=True")
    spectra = transpose_op(batched, perm=(0, 2, 1))
    norm = "ortho" if normalized else "backward"
    if return_complex:
        out = fft_c2c_op(spectra, axes=(2,), norm=norm, forward=False)
    else:
        if not onesided:
            spectra = pad_op(spectra, pads=((0, 0), (0, 0), (0, n_fft // 2 + 1 - n_fft)), mode="constant", value=0.0)
        out = fft_c2r_op(spectra, axes=(2,), norm=norm, forward=False, last_dim_size=2 * (n_fft // 2))
    total = (frames - 1) * hop_length + n_fft
    out = overlap_add_op(transpose_op(out * window, perm=(0, 2, 1)), hop_length=hop_length, length=total)
    squares = unsqueeze_op(window * window, axes=(1,)) * constant(np.ones((1, frames), dtype=window.dtype))
    envelope = overlap_add_op(squares, hop_length=hop_length, length=total)
    start = n_fft // 2 if center else 0
    if length is not None:
        stop = min(start + int(length), total)  # a longer length gets what there is, as Paddle's slice
    else:
        stop = total - n_fft // 2 if center else total
    out, envelope = _crop(out, start, stop, total), _crop(envelope, start, stop, total)
    if STATE.tracer is None and float(envelope.abs().min()) < 1e-11:  # Paddle checks in dynamic mode only
        raise DataError(
            "istft: the window's overlap-added squares vanish somewhere (the NOLA condition fails); "
            "use a longer window, a smaller hop_length or a window without zeros"
        )
    out = out / envelope
    return out if x.ndim == 3 else squeeze_op(out, axes=(0,))


def _crop(t, start: int, stop: int, total: int):
    """``t[..., start:stop]`` of a last axis of ``total`` entries."""
    pads = ((0, 0),) * (t.ndim - 1) + ((-start, stop - total),)
    return pad_op(t, pads=pads, mode="constant", value=0.0)


STFT = ["stft", "istft"]
TENSOR_METHODS = STFT
