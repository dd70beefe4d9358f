"""``paddle.audio.load/save/info`` on libsndfile (soundfile), and ``resample`` on soxr.

Paddle's soundfile backend semantics: ``load`` gives ``(channels, frames)`` float32 in [-1, 1]
(every channel kept, as Paddle does; downmixing is the caller's choice) and the sample rate. Any
PCM width libsndfile reads (8-bit too) is decoded to its true values. Unreadable, empty or too long
files raise ``DataError`` naming the file and the fix; soundfile and soxr are imported only here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError, DataError
from ..ops._util import constant

MAX_SECONDS = 3600.0
"""The longest stretch ``load`` reads in one call (an hour: 230 MB as 16 kHz mono float32, 1.4 GB at 48 kHz stereo)."""

_EXTRA_HINT = "install the framework's audio extra: pip install 'paddlectl-framework[audio]'"


@dataclass(frozen=True)
class AudioInfo:
    """What ``info`` tells about a file without decoding it (Paddle's field names)."""

    sample_rate: int
    num_samples: int
    num_channels: int
    bits_per_sample: int
    encoding: str


def _soundfile():
    try:
        import soundfile
    except ImportError as exc:  # the extra is optional: the feature layers do not need it
        raise DataError(f"paddle.audio file I/O needs soundfile: {_EXTRA_HINT}") from exc
    return soundfile


def _open_info(filepath):
    sf = _soundfile()
    path = os.fspath(filepath)
    if os.path.isdir(path):
        raise DataError(f"{path!r} is a folder, not an audio file: give one file")
    if not os.path.isfile(path):
        raise DataError(f"audio file {path!r} does not exist: check the path")
    try:
        return sf.info(path)
    except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
        raise DataError(
            f"audio file {path!r} is not readable audio ({str(exc).split(': ')[-1]}): "
            "give a WAV/FLAC/OGG file, or re-encode it (e.g. ffmpeg -i IN -ar 16000 OUT.wav)"
        ) from exc


_BITS = {"PCM_U8": 8, "PCM_S8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "FLOAT": 32, "DOUBLE": 64}


def info(filepath) -> AudioInfo:
    """Sample rate, length, channels, bits per sample and encoding of an audio file."""
    found = _open_info(filepath)
    return AudioInfo(found.samplerate, found.frames, found.channels, _BITS.get(found.subtype, 0), found.subtype)


def load(filepath, frame_offset: int = 0, num_frames: int = -1, normalize: bool = True, channels_first: bool = True):
    """``(waveform, sample_rate)``: float32 in [-1, 1] shaped ``(channels, frames)`` (``normalize=False``: int16)."""
    found = _open_info(filepath)
    path = os.fspath(filepath)
    if frame_offset < 0 or (num_frames != -1 and num_frames <= 0):
        raise ConfigError(
            f"load {path!r}: frame_offset must be >= 0 and num_frames -1 or > 0, got {frame_offset}, {num_frames}"
        )
    available = max(found.frames - frame_offset, 0)
    wanted = available if num_frames == -1 else min(num_frames, available)
    if found.frames == 0 or wanted == 0:
        raise DataError(
            f"audio file {path!r} has no samples from frame {frame_offset} (it has {found.frames}): give a non-empty recording"
        )
    if wanted > MAX_SECONDS * found.samplerate:
        raise DataError(
            f"audio file {path!r} is {found.frames / found.samplerate / 60:.1f} min long; paddle.audio.load reads at most "
            f"{MAX_SECONDS / 60:.0f} min per call: pass frame_offset/num_frames to read it in parts"
        )
    sf = _soundfile()
    try:
        data, _ = sf.read(
            path, frames=wanted, start=frame_offset, dtype="float32" if normalize else "int16", always_2d=True
        )
    except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
        raise DataError(f"audio file {path!r} is truncated or corrupt ({exc}): re-encode or replace it") from exc
    if len(data) == 0:
        raise DataError(f"audio file {path!r} decodes to no samples: its data is truncated, replace it")
    if normalize and not np.isfinite(data).all():
        raise DataError(f"audio file {path!r} holds NaN or infinite samples: re-encode it as PCM")
    return constant(np.ascontiguousarray(data.T if channels_first else data)), int(found.samplerate)


def save(
    filepath,
    src,
    sample_rate: int,
    channels_first: bool = True,
    encoding: str | None = None,
    bits_per_sample: int | None = 16,
):
    """Write ``src`` (``(channels, frames)``, float in [-1, 1] or int16) as WAV or FLAC (by the file's suffix)."""
    from ..utils.fileio import atomic_write

    sf = _soundfile()
    array = src.numpy() if isinstance(src, Tensor) else np.asarray(src)
    if array.ndim != 2:
        raise DataError(f"save: src must be 2-D (channels, frames), got shape {list(array.shape)}: add a channel axis")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int) or sample_rate <= 0:
        raise ConfigError(f"save: sample_rate must be a positive int, got {sample_rate!r}")
    subtypes = {8: "PCM_U8", 16: "PCM_16", 24: "PCM_24", 32: "PCM_32"}
    if bits_per_sample not in (*subtypes, None):
        raise ConfigError(f"save: bits_per_sample must be one of {sorted(subtypes)}, got {bits_per_sample}")
    path = os.fspath(filepath)
    fmt = {".wav": "WAV", ".flac": "FLAC"}.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise ConfigError(f"save {path!r}: the file name must end in .wav or .flac")
    subtype = subtypes[bits_per_sample or 16]
    if fmt == "FLAC" and subtype in ("PCM_U8", "PCM_32"):
        subtype = "PCM_S8" if subtype == "PCM_U8" else "PCM_24"
    frames = array.T if channels_first else array
    with atomic_write(path, "wb") as handle:
        sf.write(handle, frames, sample_rate, subtype=encoding or subtype, format=fmt)


def resample(waveform, orig_sr: int, target_sr: int):
    """``waveform`` (``(..., frames)``, array or tensor) at ``target_sr`` with soxr's high-quality filter."""
    try:
        import soxr
    except ImportError as exc:
        raise DataError(f"paddle.audio resampling needs soxr: {_EXTRA_HINT}") from exc
    for name, rate in (("orig_sr", orig_sr), ("target_sr", target_sr)):
        if isinstance(rate, bool) or not isinstance(rate, int) or rate <= 0:
            raise ConfigError(f"resample: {name} must be a positive int, got {rate!r}")
    array = waveform.numpy() if isinstance(waveform, Tensor) else np.asarray(waveform, dtype=np.float32)
    if orig_sr == target_sr:
        out = array
    elif array.ndim == 1:
        out = soxr.resample(array, orig_sr, target_sr, quality="HQ")
    else:
        flat = array.reshape(-1, array.shape[-1])
        out = np.stack([soxr.resample(row, orig_sr, target_sr, quality="HQ") for row in flat])
        out = out.reshape(*array.shape[:-1], -1)
    out = np.ascontiguousarray(out, dtype=array.dtype)
    return constant(out) if isinstance(waveform, Tensor) else out
