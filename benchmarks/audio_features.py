"""Feature-extraction throughput: paddle.audio's LogMelSpectrogram against librosa (and real Paddle's
paddle.audio where installed) on 60 s of 16 kHz audio, the front-end settings of the speech suite
(n_fft 512, window 400, hop 160, 80 mels). ``bench_features()`` returns the rows; benchmarks/asr.py
calls it, and this script prints them on their own:

    python benchmarks/audio_features.py [--seconds 60] [--rounds 5] [--json out.json]

Each round times every extractor once, interleaved (the machine's speed drifts), and the median
round's time is reported with the real-time factor and the ratio to librosa; the largest
difference from librosa's log-mel values (dB) shows they compute the same thing.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sections import Row, row, run  # noqa: E402

SR = 16000
SETTINGS = dict(n_fft=512, win_length=400, hop_length=160, n_mels=80, f_min=50.0, f_max=8000.0)


def _audio(seconds: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * 300 * t * (1 + t / seconds)) + 0.05 * rng.standard_normal(t.size)).astype(
        np.float32
    )


def _extractors(wave: np.ndarray) -> dict:
    import librosa

    import paddlectl.framework as paddle

    ours = paddle.audio.features.LogMelSpectrogram(sr=SR, **SETTINGS)
    x = paddle.to_tensor(wave[None])
    lib = dict(n_fft=SETTINGS["n_fft"], win_length=SETTINGS["win_length"], hop_length=SETTINGS["hop_length"])

    def librosa_logmel():
        mel = librosa.feature.melspectrogram(
            y=wave, sr=SR, n_mels=80, fmin=50.0, fmax=8000.0, pad_mode="reflect", **lib
        )
        return librosa.power_to_db(mel, top_db=None)

    found = {"paddlectl": lambda: ours(x).numpy()[0], "librosa": librosa_logmel}
    try:
        import paddle as real_paddle

        theirs = real_paddle.audio.features.LogMelSpectrogram(sr=SR, **SETTINGS)
        tx = real_paddle.to_tensor(wave[None])
        found["paddle 3.3.1"] = lambda: theirs(tx).numpy()[0]
    except ImportError:
        pass
    return found


def bench_features(seconds: float = 60.0, rounds: int = 5) -> list[Row]:
    """Rows: seconds per ``seconds`` of audio for each extractor, its real-time factor, the ratio to
    librosa, and our largest difference from librosa (dB)."""
    wave = _audio(seconds)
    extractors = _extractors(wave)
    outputs = {name: fn() for name, fn in extractors.items()}  # warm-up (JIT, caches) and parity
    times: dict[str, list[float]] = {name: [] for name in extractors}
    for _ in range(rounds):
        for name, fn in extractors.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t) for name, t in times.items()}
    rows = []
    for name, value in median.items():
        rows.append(row("features", f"{name} log-mel, s per {seconds:g} s of audio", value))
        rows.append(row("features", f"{name} real-time factor", value / seconds))
    rows.append(row("features", "paddlectl / librosa time", median["paddlectl"] / median["librosa"]))
    diff = float(np.abs(outputs["paddlectl"] - outputs["librosa"]).max())
    rows.append(row("features", "max |paddlectl - librosa| (dB)", diff, goal="< 1e-2", ok=diff < 1e-2))
    return rows


def _features_section(args) -> list[Row]:
    return bench_features(args.seconds, args.rounds)


def _add_arguments(parser) -> None:
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the test signal")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")


if __name__ == "__main__":
    run("paddle.audio features vs librosa", __doc__, {"features": _features_section}, _add_arguments)
