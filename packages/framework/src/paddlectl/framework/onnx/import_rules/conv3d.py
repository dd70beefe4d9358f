"""3-D Conv (N, C, D, H, W) as a sum of 2-D convolutions, one per depth tap of the kernel.

Output depth ``o`` is ``sum_kd conv2d(x[:, :, o*sD + kd*dD], W[:, :, kd]) + bias``: for each tap
``kd`` the input depths it reads (a strided slice) are folded into the batch, convolved over
(H, W) with that tap's 2-D kernel (strides, padding, dilation and groups per axis), and the taps'
results added. Depth padding is explicit zeros; ``auto_pad`` SAME is refused for 5-D inputs."""

from __future__ import annotations

from ...errors import ConversionError
from ..dependency import onnx
from .base import arg, item, rank

_ALL = ["slice", None, None, None]


def lift_conv_3d(convert):
    """``convert`` (the 2-D Conv rule) applied to 5-D inputs tap by tap."""

    def wrapped(b, node, a, opset):
        if rank(b, node.input[0]) != 5:
            return convert(b, node, a, opset)
        return _conv3d(b, node, a, opset, convert)

    return wrapped


def _conv3d(b, node, a, opset, convert):
    x, w = node.input[0], node.input[1]
    shape, kernel = item(b, x).shape, item(b, w).shape
    if not all(isinstance(d, int) for d in (*shape[1:], *kernel)):
        raise ConversionError(f"{b.where()}: a 3-D Conv needs fixed C, D, H, W and kernel sizes, got {list(shape)}")
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise ConversionError(f"{b.where()}: auto_pad={a['auto_pad']!r} is not supported for 3-D Conv; give pads")
    out_channels, _, k_depth = kernel[:3]
    strides, dilations = list(a.get("strides", [1, 1, 1])), list(a.get("dilations", [1, 1, 1]))
    pads = list(a.get("pads", [0] * 6)) if a.get("auto_pad", "NOTSET") == "NOTSET" else [0] * 6
    if pads[0] or pads[3]:
        (x,) = b.op("pad", [x], pads=((0, 0), (0, 0), (pads[0], pads[3]), (0, 0), (0, 0)), mode="constant", value=0.0)
    depth = shape[2] + pads[0] + pads[3]
    out_depth = (depth - dilations[0] * (k_depth - 1) - 1) // strides[0] + 1
    if out_depth < 1:
        raise ConversionError(f"{b.where()}: the kernel's depth is larger than the padded input {list(shape)}")
    plane = {"strides": strides[1:], "dilations": dilations[1:], "pads": [pads[1], pads[2], pads[4], pads[5]],
             "group": int(a.get("group", 1)), "kernel_shape": list(kernel[3:])}  # fmt: skip
    channels, h, wd = shape[1], shape[3], shape[4]
    total = None
    for kd in range(k_depth):
        start = kd * dilations[0]
        spec = [_ALL, _ALL, ["slice", start, start + (out_depth - 1) * strides[0] + 1, strides[0]], _ALL, _ALL]
        (taps,) = b.op("getitem", [x], spec=spec)
        (taps,) = b.op("transpose", [taps], perm=[0, 2, 1, 3, 4])
        (taps,) = b.op("reshape", [taps], shape=(-1, channels, h, wd))
        (weight,) = b.op("getitem", [w], spec=[_ALL, _ALL, ["int", kd], _ALL, _ALL])
        names = [f"{node.output[0]}::tap{kd}", f"{node.output[0]}::w{kd}"]
        b.set(names[0], taps)
        b.set(names[1], weight)
        node2 = onnx.helper.make_node("Conv", names, [f"{node.output[0]}::out{kd}"], name=node.name, **plane)
        (part,) = convert(b, node2, plane, opset)
        total = part if total is None else b.op("add", [total, part])[0]
    ho, wo = total.shape[2:]
    (out,) = b.op("reshape", [total], shape=(-1, out_depth, out_channels, ho, wo))
    (out,) = b.op("transpose", [out], perm=[0, 2, 1, 3, 4])
    if arg(node, 2):
        (bias,) = b.op("reshape", [node.input[2]], shape=(1, -1, 1, 1, 1))
        (out,) = b.op("add", [out, bias])
    return [out]
