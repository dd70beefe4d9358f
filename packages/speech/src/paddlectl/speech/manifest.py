"""Manifests in PaddleSpeech's JSON-lines form: one utterance per line with ``utt`` (its id), ``feat``
(the audio path, relative paths resolved against the manifest's folder), ``feat_shape`` (``[seconds]``
for raw audio) and ``text``.

Every line is checked when read, so a training run fails at once on line 7's missing file rather than
at step 3,000; writing is atomic, so a reader never sees half a manifest.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from paddlectl.framework.utils.fileio import atomic_write

from .errors import ManifestError

REQUIRED = ("utt", "feat", "feat_shape", "text")


@dataclass(frozen=True)
class Utterance:
    """One manifest line: id, absolute audio path, duration in seconds, transcript, and the speaker
    (PaddleSpeech's optional ``utt2spk``: a held-out test set leaves speakers out)."""

    utt: str
    feat: Path
    duration: float
    text: str
    speaker: str = ""

    def to_json(self, relative_to: Path | None = None) -> dict:
        feat = self.feat.resolve()
        if relative_to is not None and feat.is_relative_to(relative_to.resolve()):
            feat = feat.relative_to(relative_to.resolve())
        record = {"utt": self.utt, "feat": feat.as_posix(), "feat_shape": [round(self.duration, 4)], "text": self.text}
        return {**record, "utt2spk": self.speaker} if self.speaker else record


def _parse(line: str, number: int, where: str, root: Path, check_files: bool) -> Utterance:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{where} line {number}: not JSON ({exc.msg}): write one JSON object per line") from None
    if not isinstance(record, dict):
        raise ManifestError(f"{where} line {number}: expected a JSON object with {', '.join(REQUIRED)}")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise ManifestError(
            f"{where} line {number}: missing {', '.join(missing)} (each line needs {', '.join(REQUIRED)})"
        )
    utt, feat, shape, text = (record[k] for k in REQUIRED)
    if not isinstance(utt, str) or not utt:
        raise ManifestError(f"{where} line {number}: utt must be a non-empty string, got {utt!r}")
    if not isinstance(text, str):
        raise ManifestError(f"{where} line {number}: text must be a string, got {type(text).__name__}")
    if not isinstance(feat, str) or not feat:
        raise ManifestError(f"{where} line {number}: feat must be the audio file's path, got {feat!r}")
    ok_shape = (
        isinstance(shape, list) and shape and all(isinstance(v, int | float) and not isinstance(v, bool) for v in shape)
    )
    if not ok_shape or not (math.isfinite(shape[0]) and shape[0] > 0):
        raise ManifestError(f"{where} line {number}: feat_shape must be [seconds] with seconds > 0, got {shape!r}")
    path = Path(feat) if Path(feat).is_absolute() else root / feat
    if check_files and not path.is_file():
        raise ManifestError(
            f"{where} line {number}: audio file {feat!r} does not exist ({path}): fix the path or remove the line"
        )
    speaker = record.get("utt2spk", "")
    if not isinstance(speaker, str):
        raise ManifestError(f"{where} line {number}: utt2spk must be a string, got {speaker!r}")
    return Utterance(utt, path, float(shape[0]), text, speaker)


def read_manifest(path: str | Path, check_files: bool = True) -> list[Utterance]:
    """Every utterance of a manifest, each line validated (``check_files=False`` skips the existence check)."""
    path = Path(path)
    if not path.is_file():
        raise ManifestError(f"manifest {str(path)!r} does not exist: build one with `paddlectl speech synth --out DIR`")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ManifestError(f"manifest {str(path)!r} is not UTF-8 text ({exc.reason}): re-save it as UTF-8") from None
    root, seen, out = path.resolve().parent, {}, []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        utt = _parse(line, number, str(path), root, check_files)
        if utt.utt in seen:
            raise ManifestError(
                f"{path} line {number}: utt {utt.utt!r} repeats line {seen[utt.utt]}: ids must be unique"
            )
        seen[utt.utt] = number
        out.append(utt)
    if not out:
        raise ManifestError(f"manifest {str(path)!r} has no utterances: give one JSON object per line")
    return out


def write_manifest(path: str | Path, utterances: list[Utterance]) -> Path:
    """Write ``utterances`` atomically, audio paths relative to the manifest's folder where they lie under it."""
    path = Path(path)
    root = path.resolve().parent
    with atomic_write(path, "w", encoding="utf-8") as handle:
        for utt in utterances:
            handle.write(json.dumps(utt.to_json(relative_to=root), ensure_ascii=False) + "\n")
    return path
