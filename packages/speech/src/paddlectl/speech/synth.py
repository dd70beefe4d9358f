"""The synthetic speech corpus: digit strings and short commands spoken by espeak-ng and flite.

Every English espeak-ng voice with every voice variant, and flite's voices (see ``voices``), at several
rates and pitches, then padded with silence, mixed with noise at a drawn SNR and resampled to 16 kHz
mono. Half the utterances go to each program when both speak (flite has a handful of voices, espeak-ng
hundreds of variants). Utterance ``i`` draws from ``default_rng([seed, i])``, so a corpus is the same
whatever the order of the work; the whole folder appears at once (built beside ``--out`` and renamed),
so nothing partial is left by a failure.
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
from .voices import command, is_flite, speakers, synthesiser_cards

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
DISTANCES = ("one", "two", "three", "four", "five", "ten")
COMMANDS = (
    "stop", "start", "yes", "no", "go", "turn left", "turn right", "move up", "move down",
    *(f"go {way} {n} {'meter' if n == 'one' else 'meters'}" for way in ("forward", "backward") for n in DISTANCES),
)  # fmt: skip
RATES = (120, 150, 175, 200, 230)
PITCHES = (25, 40, 50, 60, 75)
FLITE_F0_HZ = (90, 110, 130, 160, 190)
"""flite's pitches: a mean F0 in Hz, from a low male voice to a child's."""
SNR_DB = (10.0, 35.0)


def lexicon() -> list[str]:
    """Every word the corpus speaks: the vocabulary is built from these, not from the drawn texts."""
    return sorted({w for text in (*DIGITS, *COMMANDS) for w in text.split()})


@dataclass(frozen=True)
class Draw:
    """One utterance's settings, drawn from its own seeded generator."""

    utt: str
    text: str
    voice: str
    rate: int
    pitch: int
    seed: tuple[int, int]


def draw(index: int, seed: int, chosen: list[str]) -> Draw:
    rng = np.random.default_rng([seed, index])
    if rng.random() < 0.5:
        text = " ".join(DIGITS[d] for d in rng.integers(0, 10, size=int(rng.integers(1, 5))))
    else:
        text = COMMANDS[int(rng.integers(len(COMMANDS)))]
    groups = [g for g in ([s for s in chosen if not is_flite(s)], [s for s in chosen if is_flite(s)]) if g]
    group = groups[int(rng.integers(len(groups)))] if len(groups) > 1 else groups[0]
    voice = group[int(rng.integers(len(group)))]
    rate = int(rng.choice(RATES))
    pitch = int(rng.choice(FLITE_F0_HZ if is_flite(voice) else PITCHES))
    return Draw(f"synth-{seed}-{index:06d}", text, voice, rate, pitch, (seed, index))


def speak(item: Draw, workdir: Path) -> np.ndarray:
    """The synthesiser's rendering of ``item`` as noisy 16 kHz mono float32 samples."""
    raw = workdir / f"{item.utt}.raw.wav"
    line = command(item.voice, item.text, item.rate, item.pitch, raw)
    result = subprocess.run(line, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not raw.is_file():
        raise SynthError(f"{Path(line[0]).name} failed on voice {item.voice!r}: {result.stderr.strip() or 'no output'}")
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

    ``voices`` restricts the speakers (``VOICE+VARIANT``, a bare espeak-ng voice with every variant, or
    ``flite:NAME``) so a test set can hold out voices; ``progress`` is called with the number of finished utterances."""
    out = Path(out)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise SynthError(f"--n must be a positive number of utterances, got {n!r}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SynthError(f"{out} already exists and is not an empty folder: choose a new --out or remove it")
    chosen = speakers(voices)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial"))
    try:
        (staging / "wavs").mkdir()
        draws = [draw(i, seed, chosen) for i in range(n)]

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
        _write_card(staging / "corpus.json", n, seed, chosen, draws)
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _write_card(path: Path, n: int, seed: int, chosen: list[str], draws: list[Draw]) -> None:
    """What made the corpus: enough to rebuild it and to state its licence lineage."""
    card = {
        "generator": "paddlectl speech synth",
        "synthesisers": synthesiser_cards([d.voice for d in draws]),
        "license": "Apache-2.0",
        "license_note": "synthesiser output: the programs' licences cover them, not the audio they speak",
        "n": n,
        "seed": seed,
        "speakers": len(chosen),
        "sample_rate": SAMPLE_RATE,
        "snr_db": list(SNR_DB),
        "rates": list(RATES),
        "pitches": list(PITCHES),
        "flite_f0_hz": list(FLITE_F0_HZ),
    }
    path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
