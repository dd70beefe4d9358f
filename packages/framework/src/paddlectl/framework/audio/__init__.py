"""``paddle.audio``: audio files in and out, and the feature layers a speech model starts with.

The feature layers are framework ops (they train, trace and export); file I/O needs the ``audio``
extra (soundfile, soxr) and imports it only when called.
"""

from . import backends, features, functional
from .backend import AudioInfo, info, load, resample, save

__all__ = ["AudioInfo", "backends", "features", "functional", "info", "load", "resample", "save"]
