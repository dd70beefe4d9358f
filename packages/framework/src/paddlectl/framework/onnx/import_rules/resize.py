"""ONNX Resize in the modes the interpolate kernel does not have (nearest with rounding, cubic,
half_pixel_symmetric, align_corners nearest, antialiasing...), as one constant weight matrix per
resized axis applied with matmul.

Resize is separable: along each axis the output is a fixed linear map of the input. The map is
taken from onnx's own reference implementation (``onnx.reference``) run on an identity matrix,
so every mode means exactly what ONNX says; it needs the resized axes' sizes fixed. It costs a
dense [out, in] product per axis where the kernel costs two taps per output, so the modes the
kernel has (``converters._RESIZE_MODES``) keep using it.
"""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from ..dependency import onnx

_PASSED = ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "antialias")


def _axis_matrix(n: int, a: dict, scale: float | None, size: int | None) -> np.ndarray:
    """[out, n]: ONNX's Resize along one axis of length ``n`` (by ``scale`` or to ``size``)."""
    from onnx.reference import ReferenceEvaluator

    attrs = {k: a[k] for k in _PASSED if k in a}
    inputs = ["x", "", "scales"] if size is None else ["x", "", "", "sizes"]
    node = onnx.helper.make_node("Resize", inputs, ["y"], **attrs)
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, [n, n])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, None)
    model = onnx.helper.make_model(onnx.helper.make_graph([node], "axis", [x], [y]),
                                   opset_imports=[onnx.helper.make_opsetid("", 19)])  # fmt: skip
    feed = {"scales": np.array([1.0, scale], np.float32)} if size is None else {"sizes": np.array([n, size], np.int64)}
    (rows,) = ReferenceEvaluator(model).run(None, {"x": np.eye(n), **feed})  # row j: e_j resized
    return rows.T


def resize_by_matrices(b, node, a, x: str, scales, sizes, axes) -> list:
    """``x`` resized along ``axes`` (every axis by default) by ``scales`` or to ``sizes``."""
    shape = b.get(x).shape
    r = len(shape)
    axes = list(range(r)) if axes is None else [int(i) + r if int(i) < 0 else int(i) for i in axes]
    out = x
    for k, axis in enumerate(axes):
        scale = None if scales is None else float(scales[k])
        size = None if sizes is None else int(sizes[k])
        n = shape[axis]
        if (scale == 1.0 or size == n) and isinstance(n, int):
            continue
        if not isinstance(n, int):
            raise ConversionError(f"{b.where()}: Resize mode {a.get('mode', 'nearest')!r} needs a fixed size on "
                                  f"axis {axis}, got {n}")  # fmt: skip
        weights = _axis_matrix(n, a, scale, size).astype(np.dtype(b.get(x).dtype))
        if axis == r - 1:
            (out,) = b.op("matmul", [out, weights.T.copy()])
        elif axis == r - 2:
            (out,) = b.op("matmul", [weights, out])
        else:
            perm = [i for i in range(r) if i != axis] + [axis]
            (moved,) = b.op("transpose", [out], perm=perm)
            (moved,) = b.op("matmul", [moved, weights.T.copy()])
            (out,) = b.op("transpose", [moved], perm=list(np.argsort(perm)))
    return [b.get(out) if isinstance(out, str) else out]
