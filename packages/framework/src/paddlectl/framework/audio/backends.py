"""``paddle.audio.backends``: which library reads and writes audio files.

Paddle offers a PCM16-only ``wave_backend`` and, with paddleaudio, ``soundfile``. Here soundfile
(the ``audio`` extra) is the one backend: it reads every file the wave backend reads and more, so
code that calls ``set_backend("soundfile")`` runs unchanged.
"""

from __future__ import annotations

import importlib.util

from ..errors import ConfigError

SOUNDFILE = "soundfile"


def list_available_backends() -> list[str]:
    """``["soundfile"]`` when the audio extra is installed, else ``[]``."""
    return [SOUNDFILE] if importlib.util.find_spec(SOUNDFILE) is not None else []


def get_current_backend() -> str:
    return SOUNDFILE


def set_backend(backend_name: str) -> None:
    """Accept ``"soundfile"`` (the backend in use); anything else names what is available."""
    if backend_name != SOUNDFILE or backend_name not in list_available_backends():
        raise ConfigError(
            f"audio backend {backend_name!r} is not available here (available: {list_available_backends()}); "
            "paddle.audio reads and writes through soundfile: pip install 'paddlectl-framework[audio]'"
        )
