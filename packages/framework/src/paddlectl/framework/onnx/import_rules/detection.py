"""Import rule for ONNX's NonMaxSuppression (opset 10+), the post-process of exported detectors.

Its limits and thresholds are inputs in ONNX; here they must be known when the graph is imported
(constants or initializers, as exporters write them), and become the op's attributes.
"""

from __future__ import annotations

from ...errors import ConversionError
from .base import Rule, arg


def _scalar(b, node, i: int, what: str, default):
    """Optional input ``i`` as a Python number, ``default`` where it is omitted."""
    if not arg(node, i):
        return default
    values = b.require_known(arg(node, i), f"NonMaxSuppression {what}").reshape(-1).tolist()
    if len(values) != 1:
        raise ConversionError(f"{b.where()}: NonMaxSuppression {what} must hold one value, got {len(values)}")
    return values[0]


def _nms(b, node, a, opset):
    center = int(a.get("center_point_box", 0))
    if center not in (0, 1):
        raise ConversionError(f"{b.where()}: center_point_box must be 0 or 1, got {center}")
    score = _scalar(b, node, 4, "score_threshold", None)
    return b.op(
        "non_max_suppression",
        [node.input[0], node.input[1]],
        max_per_class=max(int(_scalar(b, node, 2, "max_output_boxes_per_class", 0)), 0),
        iou_threshold=float(_scalar(b, node, 3, "iou_threshold", 0.0)),
        score_threshold=None if score is None else float(score),
        center_point_box=center,
    )


RULES = {"NonMaxSuppression": Rule(_nms, frozenset({"center_point_box"}), since=10)}
