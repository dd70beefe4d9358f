"""What the COCO and VOC readers share: records through the transforms to ``(image, label table)``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from paddlectl.framework.errors import DataError
from paddlectl.framework.io import Dataset


class DetDataset(Dataset):
    """Records (PaddleDetection's keys: ``im_file``, ``im_id``, ``gt_bbox`` x1y1x2y2, ``gt_class``,
    ``is_crowd``) run through ``transforms``; the last one (``PadGT``) makes ``(image, label)``."""

    def __init__(
        self, records: list[dict], label_names: list[str], transforms: Sequence[Callable], dropped: int, source: str
    ):
        if not records:
            raise DataError(f"{source} holds no images")
        self.records, self.label_names, self.ops = records, label_names, list(transforms)
        self.dropped = dropped

    def __len__(self) -> int:
        return len(self.records)

    def sample(self, index: int, ops: Sequence[Callable] | None = None) -> dict:
        """Record ``index`` through ``ops`` (all but the last transform by default) as a dict."""
        data = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in self.records[index].items()}
        for op in self.ops[:-1] if ops is None else ops:
            data = op(data)
        return data

    def __getitem__(self, index: int):
        return self.ops[-1](self.sample(index))
