"""Import rule for ONNX's RoiAlign onto the ``roi_align`` record (Paddle's kernel, which also runs
ONNX's ``max`` mode). Opset 10 has no ``coordinate_transformation_mode`` and behaves as
``output_half_pixel`` (boxes taken as given, at least a pixel wide); opset 16 adds it, defaulting to
``half_pixel`` (boxes shifted by half a pixel: Paddle's ``aligned=True``)."""

from __future__ import annotations

from .base import Rule, one_of

_MODES = one_of("mode", ("avg", "max"), "avg")
_COORDINATES = one_of("coordinate_transformation_mode", ("half_pixel", "output_half_pixel"), "half_pixel")


def _check(a: dict, opset: int) -> list[str]:
    return _MODES(a, opset) + _COORDINATES(a, opset)


def _roi_align(b, node, a, opset):
    default = "half_pixel" if opset >= 16 else "output_half_pixel"
    return b.op(
        "roi_align",
        list(node.input[:3]),
        output_size=(int(a.get("output_height", 1)), int(a.get("output_width", 1))),
        spatial_scale=float(a.get("spatial_scale", 1.0)),
        sampling_ratio=int(a.get("sampling_ratio", 0)),
        aligned=a.get("coordinate_transformation_mode", default) == "half_pixel",
        mode=a.get("mode", "avg"),
    )


RULES = {
    "RoiAlign": Rule(
        _roi_align,
        frozenset({"mode", "output_height", "output_width", "sampling_ratio", "spatial_scale",
                   "coordinate_transformation_mode"}),
        since=10,
        check=_check,
    )
}  # fmt: skip
