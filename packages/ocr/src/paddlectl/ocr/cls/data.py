"""Direction-classifier data: PaddleOCR's ``ClsLabelEncode`` (a label-file line ``img<TAB>0`` or
``img<TAB>180``), and ``DirectionDataSet``, which makes both classes from upright line crops (a
recogniser's ``img<TAB>text`` label files): every line once as it is ("0") and once turned by
180 degrees ("180", done by ``RotateToLabel``), so any rec data set trains the classifier."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paddlectl.framework.errors import ConfigError

from ..task_base import DecodeImage, SimpleDataSet


class ClsLabelEncode:
    """``data['label']`` (a name in ``label_list``) -> its int64 index; an unknown label drops the sample."""

    def __init__(self, label_list: Sequence[str] = ("0", "180")) -> None:
        self.index = {str(name): i for i, name in enumerate(label_list)}

    def __call__(self, data: dict) -> dict | None:
        label = str(data["label"]).strip()
        if label not in self.index:
            return None
        data["label"] = np.int64(self.index[label])
        return data


class RotateToLabel:
    """After DecodeImage: the upright crop turned by the sample's label ("180": upside down, and that
    turned array is what serving is given for it; "0": as it is, served from its file)."""

    def __call__(self, data: dict) -> dict:
        if str(data["label"]).strip() == "180":
            data["image"] = data["raw"] = np.ascontiguousarray(data["image"][::-1, ::-1])
        return data


class DirectionDataSet(SimpleDataSet):
    """Upright lines from rec label files, each as a "0" and a "180" sample (``RotateToLabel`` after
    DecodeImage among the transforms)."""

    def samples(self, rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        kinds = [type(op) for op in self.ops]
        if (
            RotateToLabel not in kinds
            or DecodeImage not in kinds
            or kinds.index(RotateToLabel) < kinds.index(DecodeImage)
        ):
            raise ConfigError("DirectionDataSet needs RotateToLabel in its transforms, after DecodeImage")
        return [(name, direction, where) for name, _, where in rows for direction in ("0", "180")]
