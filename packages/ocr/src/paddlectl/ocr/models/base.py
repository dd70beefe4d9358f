"""One model set: where its det/cls/rec files are, its dictionary, its settings and licence manifest."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..ctc import read_dictionary
from ..pipeline import OCRSettings, TextSystem


@dataclass(frozen=True)
class ModelSet:
    """Where one det/cls/rec set lives and how to run it. ``dictionary`` None: the recogniser
    carries its characters in its metadata (``character``), as RapidOCR's exports do. ``served``:
    our own exports, each stage run through its task's stored processing (``served``)."""

    name: str
    det: Path
    cls: Path | None
    rec: Path
    dictionary: Path | None
    settings: OCRSettings
    manifest: str | None  # an asset.yaml path, or the licence auditor's shipped manifest name
    served: bool = False

    def load(self, threads: int | None = None, workers: int | None = None) -> TextSystem:
        """The chain over these models (the dictionary checked against the recogniser's output);
        ``threads`` per predictor and ``workers`` (images at a time) replace the set's settings."""
        settings = self.settings if threads is None else replace(self.settings, threads=threads)
        settings = settings if workers is None else replace(settings, workers=workers)
        if self.served:
            from .served import ServedTextSystem

            return ServedTextSystem(self.det, self.cls, self.rec, settings)
        characters = None if self.dictionary is None else read_dictionary(self.dictionary)
        return TextSystem(self.det, self.cls, self.rec, settings, characters)
