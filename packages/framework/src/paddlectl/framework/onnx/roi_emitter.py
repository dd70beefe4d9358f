"""The export rule of ``roi_align``: ONNX's ``RoiAlign`` (opset 16's, which names how box corners map
to pixels): Paddle's ``aligned`` is ``half_pixel``, unaligned boxes are ``output_half_pixel``, and
an adaptive ``sampling_ratio`` (<= 0) is ONNX's 0. The image indices are the op's third input."""

from __future__ import annotations

from .emitters import emits


@emits("roi_align")
def _roi_align(e, op, ins, out, *, output_size, spatial_scale, sampling_ratio, aligned, mode):
    x, boxes, batch = ins
    if op.inputs[1].dtype != op.inputs[0].dtype:
        (boxes,) = e.node("Cast", [boxes], to=e.dtype_code(op.inputs[0].dtype))
    if op.inputs[2].dtype.name != "int64":
        (batch,) = e.node("Cast", [batch], to=e.dtype_code("int64"))
    e.node(
        "RoiAlign",
        [x, boxes, batch],
        out,
        mode=mode,
        output_height=int(output_size[0]),
        output_width=int(output_size[1]),
        sampling_ratio=max(int(sampling_ratio), 0),
        spatial_scale=float(spatial_scale),
        coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel",
    )
