"""OCR metrics as PaddleOCR computes them, on the framework's streaming Metric protocol
(``update`` per batch, ``accumulate`` in ``name()`` order, ``reset``; ``result()`` as a dict)."""

from .det import DetMetric
from .e2e import E2EMetric
from .rec import RecMetric

__all__ = ["DetMetric", "E2EMetric", "RecMetric"]
