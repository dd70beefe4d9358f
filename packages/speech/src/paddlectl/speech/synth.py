"""The synthetic speech corpus: digit strings and short commands spoken by espeak-ng.

Every English espeak-ng voice (the MBROLA ones need a separate synthesiser and are left out) with
every voice variant, at several rates and pitches, then padded with silence, mixed with noise at a
drawn SNR and resampled to 16 kHz mono. Utterance ``i`` draws from ``default_rng([seed, i])``, so a
corpus is the same whatever the order of the work; the whole folder appears at once (built beside
``--out`` and renamed), so nothing partial is left by a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile

from .audio import SAMPLE_RATE, write_audio
from .augment import add_noise
from .errors import SynthError
from .manifest import Utterance, write_manifest
from .vocab import Vocabulary

ESPEAK = "espeak-ng"
INSTALL_HINT = "install espeak-ng: apt-get install -y espeak-ng (Debian/Ubuntu)"
DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
DISTANCES = ("one", "two", "three", "four", "five", "ten")
COMMANDS = (
    "stop", "start", "yes", "no", "go", "turn left", "turn right", "move up", "move down",
    *(f"go {way} {n} {'meter' if n == 'one' else 'meters'}" for way in ("forward", "backward") for n in DISTANCES),
)  # fmt: skip
RATES = (120, 150, 175, 200, 230)
PITCHES = (25, 40, 50, 60, 75)
SNR_DB = (10.0, 35.0)


def lexicon() -> list[str]:
    """Every word the corpus speaks: the vocabulary is built from these, not from the drawn texts."""
    return sorted({w for text in (*DIGITS, *COMMANDS) for w in text.split()})


def _espeak() -> str:
    found = shutil.which(ESPEAK)
    if found is None:
        raise SynthError(f"`{ESPEAK}` was not found on PATH: {INSTALL_HINT}")
    return found


def _listing(kind: str) -> list[list[str]]:
    result = subprocess.run([_espeak(), f"--voices={kind}"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SynthError(f"`{ESPEAK} --voices={kind}` failed: {result.stderr.strip()}; reinstall it ({INSTALL_HINT})")
    return [line.split() for line in result.stdout.splitlines()[1:] if line.strip()]


def english_voices() -> list[str]:
    """espeak-ng's own English voices (language codes such as ``en-gb-scotland``), MBROLA ones left out."""
    rows = [row for row in _listing("en") if len(row) >= 5]
    return sorted({row[1] for row in rows if not row[4].startswith(("mb/", "!v/"))})


def variants() -> list[str]:
    """The voice variants (``m3``, ``f2``, ``klatt``, ``Storm``, ...) that ``VOICE+VARIANT`` applies."""
    return sorted(row[4].removeprefix("!v/") for row in _listing("variant") if len(row) >= 5)


@dataclass(frozen=True)
class Draw:
    """One utterance's settings, drawn from its own seeded generator."""

    utt: str
    text: str
    voice: str
    rate: int
    pitch: int
    seed: tuple[int, int]


def draw(index: int, seed: int, speakers: list[str]) -> Draw:
    rng = np.random.default_rng([seed, index])
    if rng.random() < 0.5:
        text = " ".join(DIGITS[d] for d in rng.integers(0, 10, size=int(rng.integers(1, 5))))
    else:
        text = COMMANDS[int(rng.integers(len(COMMANDS)))]
    voice = speakers[int(rng.integers(len(speakers)))]
    return Draw(
        f"synth-{seed}-{index:06d}", text, voice, int(rng.choice(RATES)), int(rng.choice(PITCHES)), (seed, index)
    )


def speak(item: Draw, workdir: Path) -> np.ndarray:
    """espeak-ng's rendering of ``item`` as noisy 16 kHz mono float32 samples."""
    raw = workdir / f"{item.utt}.espeak.wav"
    command = [_espeak(), "-v", item.voice, "-s", str(item.rate), "-p", str(item.pitch), "-w", str(raw), item.text]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not raw.is_file():
        raise SynthError(f"espeak-ng failed on voice {item.voice!r}: {result.stderr.strip() or 'no output'}")
    samples, rate = soundfile.read(str(raw), dtype="float32", always_2d=True)
    raw.unlink()
    from paddlectl.framework.audio import resample

    wave = resample(samples.mean(axis=1), rate, SAMPLE_RATE)
    rng = np.random.default_rng([*item.seed, 1])
    pad = rng.integers(int(0.05 * SAMPLE_RATE), int(0.3 * SAMPLE_RATE), size=2)
    wave = np.concatenate([np.zeros(pad[0], np.float32), wave, np.zeros(pad[1], np.float32)])
    kind = ("white", "pink", "brown")[int(rng.integers(3))]
    wave = add_noise(wave, rng, snr_db=SNR_DB, kind=kind)
    return (wave * (rng.uniform(0.3, 0.9) / max(float(np.abs(wave).max()), 1e-6))).astype(np.float32)


def synthesize(
    out: str | Path,
    n: int,
    seed: int = 0,
    voices: list[str] | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Write ``n`` utterances under ``out`` (``wavs/``, ``manifest.jsonl``, ``vocab.txt``, ``corpus.json``).

    ``voices`` restricts the speakers (``VOICE+VARIANT``, or a bare voice with every variant) so a
    test set can hold out voices; ``progress`` is called with the number of finished utterances."""
    out = Path(out)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise SynthError(f"--n must be a positive number of utterances, got {n!r}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SynthError(f"{out} already exists and is not an empty folder: choose a new --out or remove it")
    speakers = _speakers(voices)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial"))
    try:
        (staging / "wavs").mkdir()
        draws = [draw(i, seed, speakers) for i in range(n)]

        def render(item: Draw) -> Utterance:
            wave = speak(item, staging)
            path = write_audio(staging / "wavs" / f"{item.utt}.wav", wave)
            return Utterance(item.utt, path, len(wave) / SAMPLE_RATE, item.text, speaker=item.voice)

        utterances = []
        with ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1)) as pool:
            for done, utt in enumerate(pool.map(render, draws), start=1):
                utterances.append(utt)
                if progress is not None:
                    progress(done)
        write_manifest(staging / "manifest.jsonl", utterances)
        Vocabulary.build(lexicon()).save(staging / "vocab.txt")
        _write_card(staging / "corpus.json", n, seed, speakers)
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _speakers(voices: list[str] | None) -> list[str]:
    known, kinds = english_voices(), variants()
    if not known:
        raise SynthError(f"espeak-ng lists no English voice: {INSTALL_HINT} (with its espeak-ng-data)")
    every = [f"{v}+{k}" for v in known for k in kinds] or known
    if not voices:
        return every
    chosen = []
    for spec in voices:
        base = spec.split("+", 1)[0]
        if base not in known:
            raise SynthError(f"unknown English voice {base!r}: choose from {', '.join(known)}")
        if "+" in spec and spec.split("+", 1)[1] not in kinds:
            raise SynthError(f"unknown voice variant in {spec!r}: choose from `espeak-ng --voices=variant`")
        chosen += [spec] if "+" in spec else [f"{base}+{k}" for k in kinds]
    return chosen


def espeak_version() -> str:
    result = subprocess.run([_espeak(), "--version"], capture_output=True, text=True, check=False)
    return result.stdout.split(":")[1].split()[0] if ":" in result.stdout else "unknown"


def _write_card(path: Path, n: int, seed: int, speakers: list[str]) -> None:
    """What made the corpus: enough to rebuild it and to state its licence lineage."""
    card = {
        "generator": "paddlectl speech synth",
        "synthesiser": {"name": "espeak-ng", "version": espeak_version(), "license": "GPL-3.0-or-later"},
        "license": "Apache-2.0",
        "license_note": "espeak-ng output: the GPL covers the synthesiser, not the audio it speaks",
        "n": n,
        "seed": seed,
        "speakers": len(speakers),
        "sample_rate": SAMPLE_RATE,
        "snr_db": list(SNR_DB),
        "rates": list(RATES),
        "pitches": list(PITCHES),
    }
    path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
