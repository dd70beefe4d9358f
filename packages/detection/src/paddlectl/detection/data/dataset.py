"""What the COCO and VOC readers share: records through the transforms to ``(image, label table)``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from paddlectl.framework.errors import DataError
from paddlectl.framework.io import Dataset

from .transforms import BatchTransform


class DetDataset(Dataset):
    """Records (PaddleDetection's keys: ``im_file``, ``im_id``, ``gt_bbox`` x1y1x2y2, ``gt_class``,
    ``is_crowd``) run through ``transforms``; the last one (``PadGT``) makes ``(image, label)``.

    Batch transforms (``BatchRandomResize``) need the batch: the DataLoader reads a batch's samples
    one after another in one process, so with ``batch_size`` set (``serve_batches_of``) every
    ``batch_size``-th read starts a batch, and each batch transform draws then, once for the batch.
    The loader must read whole batches only (``drop_last``), else the count drifts off the batches.
    """

    def __init__(
        self, records: list[dict], label_names: list[str], transforms: Sequence[Callable], dropped: int, source: str
    ):
        if not records:
            raise DataError(f"{source} holds no images")
        self.records, self.label_names, self.ops = records, label_names, list(transforms)
        self.dropped = dropped
        self.batch_size, self._reads, self._drawn = 1, 0, None

    def serve_batches_of(self, batch_size: int) -> None:
        """Read from now on in batches of ``batch_size`` (the loader's, per process)."""
        self.batch_size, self._reads = batch_size, 0

    def __len__(self) -> int:
        return len(self.records)

    def drawn(self) -> list[Callable]:
        """The transforms as the current batch drew them (a new batch's draw when none is current)."""
        if self._drawn is None:
            self._drawn = [op.draw() if isinstance(op, BatchTransform) else op for op in self.ops]
        return self._drawn

    def sample(self, index: int, ops: Sequence[Callable] | None = None) -> dict:
        """Record ``index`` through ``ops`` (all but the last transform by default) as a dict."""
        data = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in self.records[index].items()}
        for op in self.drawn()[:-1] if ops is None else ops:
            data = op(data)
        return data

    def __getitem__(self, index: int):
        if self._reads % self.batch_size == 0:
            self._drawn = None
        self._reads += 1
        ops = self.drawn()
        return ops[-1](self.sample(index, ops[:-1]))
