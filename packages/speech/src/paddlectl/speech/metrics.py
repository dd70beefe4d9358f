"""Word and character error rates as jiwer computes them (the numbers people compare with), over
greedy CTC transcripts of a whole evaluation set.

The trainer keeps the checkpoint whose main indicator is highest, so the metric also reports word
accuracy ``wacc = 1 - WER`` (NIST's name for it), the default main indicator.
"""

from __future__ import annotations

from collections.abc import Sequence

import jiwer
import numpy as np

from paddlectl.framework.errors import DataError
from paddlectl.framework.metric import Metric

from .decode import greedy, labels_text


def error_rates(references: Sequence[str], hypotheses: Sequence[str]) -> dict[str, float]:
    """``{"wer", "cer"}`` of hypotheses against references (jiwer's corpus-level rates)."""
    if len(references) != len(hypotheses) or not references:
        raise DataError(f"need one hypothesis per reference and at least one, got {len(hypotheses)}/{len(references)}")
    if any(not r.strip() for r in references):
        raise DataError("a reference transcript is empty; WER is undefined for it, drop the utterance")
    return {
        "wer": float(jiwer.wer(list(references), list(hypotheses))),
        "cer": float(jiwer.cer(list(references), list(hypotheses))),
    }


class AsrMetric(Metric):
    """``wacc``, ``wer`` and ``cer`` of greedy transcripts of [B, T, C] logits against padded label rows."""

    def __init__(self, classes: Sequence[str]) -> None:
        super().__init__()
        self.classes = list(classes)
        self.reset()

    def reset(self) -> None:
        self.references: list[str] = []
        self.hypotheses: list[str] = []

    def compute(self, logits, labels):
        logits, labels = np.asarray(logits), np.asarray(labels)
        if logits.ndim != 3 or logits.shape[-1] != len(self.classes):
            raise DataError(
                f"the model gives {logits.shape[-1]} classes per frame, the vocabulary has {len(self.classes)}; "
                "evaluate with the vocabulary the model was trained with"
            )
        hypotheses = [labels_text(greedy(row), self.classes) for row in logits]
        references = [labels_text([int(i) for i in row if i > 0], self.classes) for row in labels]
        return hypotheses, references

    def update(self, hypotheses, references) -> None:
        self.hypotheses += list(hypotheses)
        self.references += list(references)

    def accumulate(self) -> list[float]:
        rates = error_rates(self.references, self.hypotheses)
        return [1.0 - rates["wer"], rates["wer"], rates["cer"]]

    def name(self) -> list[str]:
        return ["wacc", "wer", "cer"]
