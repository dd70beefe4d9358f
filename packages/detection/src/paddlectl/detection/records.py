"""PaddleX's detection result, one JSON object per image, and the picture of it.

Every detector of the suite (trained here or imported) ends in PaddleDetection's deploy output,
``boxes`` [N, 6] = class id, score, x1, y1, x2, y2 in the original image's pixels; ``record`` turns
that into ``{"input_path", "boxes": [{"cls_id", "label", "score", "coordinate"}]}`` so a PaddleX
user's reader works unchanged. The JSON list is written atomically (a reader never sees half of it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from paddlectl.framework.errors import DataError, ShapeError
from paddlectl.framework.utils.fileio import atomic_write


def record(input_path: str | os.PathLike, boxes, labels: Sequence[str]) -> dict:
    """The PaddleX record of one image from its deploy-shaped ``boxes`` [N, 6]; ``labels[cls_id]``
    names each class."""
    rows = np.asarray(boxes, dtype=np.float64)
    if rows.size == 0:
        rows = rows.reshape(0, 6)
    if rows.ndim != 2 or rows.shape[1] != 6:
        raise ShapeError(f"detection boxes must be [N, 6] (class, score, x1, y1, x2, y2), got {rows.shape}")
    out = []
    for cls, score, *coordinate in rows.tolist():
        cls_id = int(cls)
        if not 0 <= cls_id < len(labels):
            raise DataError(f"detection class id {cls_id} has no label (the model names {len(labels)} classes)")
        out.append({"cls_id": cls_id, "label": labels[cls_id], "score": float(score), "coordinate": coordinate})
    return {"input_path": str(input_path), "boxes": out}


def write_json(path: str | os.PathLike, records: list[dict]) -> None:
    """The records as one JSON list (one record a line, so a diff shows which image changed)."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"--json {str(path)!r} is a directory; give a file name such as out.json")
    try:
        with atomic_write(path, "w", encoding="utf-8") as out:
            out.write("[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n")
    except OSError as exc:
        raise DataError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _colour(cls_id: int) -> tuple[int, int, int]:
    """A fixed colour per class, so pictures of one model agree."""
    rng = np.random.default_rng(cls_id)
    return tuple(int(v) for v in rng.integers(40, 220, 3))


def draw(image: np.ndarray, rec: dict) -> np.ndarray:
    """A copy of the RGB ``image`` with each box of ``rec`` outlined and captioned "label score"."""
    if image.ndim != 3 or image.shape[2] != 3:
        raise ShapeError(f"draw: the image must be H x W x 3 (RGB), got {image.shape}")
    canvas = np.ascontiguousarray(image, dtype=np.uint8).copy()
    thickness = max(1, round(min(canvas.shape[:2]) / 400))
    for box in rec["boxes"]:
        colour = _colour(box["cls_id"])
        x1, y1, x2, y2 = (round(v) for v in box["coordinate"])
        cv2.rectangle(canvas, (x1, y1), (x2, y2), colour, thickness)
        caption = f"{box['label']} {box['score']:.2f}"
        (w, h), base = cv2.getTextSize(caption, cv2.FONT_HERSHEY_SIMPLEX, 0.4 * thickness, thickness)
        top = max(y1 - h - base, 0)
        cv2.rectangle(canvas, (x1, top), (x1 + w, top + h + base), colour, -1)
        cv2.putText(
            canvas, caption, (x1, top + h), cv2.FONT_HERSHEY_SIMPLEX, 0.4 * thickness, (255, 255, 255), thickness
        )
    return canvas


def write_picture(path: str | os.PathLike, image: np.ndarray, rec: dict) -> None:
    """``draw``'s picture as a PNG (or whatever ``path``'s suffix names), written atomically."""
    path = Path(path)
    ok, data = cv2.imencode(path.suffix or ".png", draw(image, rec)[..., ::-1])
    if not ok:
        raise DataError(f"cannot encode a picture as {path.suffix!r}; give a .png or .jpg path")
    try:
        with atomic_write(path, "wb") as out:
            out.write(data.tobytes())
    except OSError as exc:
        raise DataError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
