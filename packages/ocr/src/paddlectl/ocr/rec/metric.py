"""``RecMetric`` in a recogniser's config: PaddleOCR's accuracy and 1 - normalised edit distance
(``paddlectl.ocr.metrics.rec``) over decoded model outputs. The trainer and ``paddlectl eval``
hand a metric the model's logits and the encoded labels; this decodes both with the task's
dictionary, then counts texts."""

from __future__ import annotations

from paddlectl.framework.metric import Metric

from .labels import CTCLabelDecode, softmax


class CTCRecMetric(Metric):
    def __init__(
        self, decoder: CTCLabelDecode, ignore_space: bool = True, is_filter: bool = False, main_indicator: str = "acc"
    ) -> None:
        from ..metrics.rec import RecMetric

        self.decoder = decoder
        self.texts = RecMetric(ignore_space=ignore_space, is_filter=is_filter, main_indicator=main_indicator)

    def compute(self, logits, labels):
        """[N, T, C] logits and [N, L] encoded labels -> (predicted (text, score) pairs, label texts)."""
        return self.decoder(softmax(logits)), self.decoder.labels(labels)

    def update(self, preds, labels) -> None:
        self.texts.update(preds, labels)

    def reset(self) -> None:
        self.texts.reset()

    def accumulate(self) -> list[float]:
        return self.texts.accumulate()

    def name(self) -> list[str]:
        return self.texts.name()
