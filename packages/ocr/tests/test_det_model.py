"""The DB network: PaddleOCR's widths, strides and parameter names; training vs eval outputs; bad settings."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.ocr.det.backbone import MobileNetV3
from paddlectl.ocr.det.task import DetTask

ARCH = {
    "model_type": "det",
    "algorithm": "DB",
    "Transform": None,
    "Backbone": {"name": "MobileNetV3", "scale": 0.5, "model_name": "large"},
    "Neck": {"name": "DBFPN", "out_channels": 256},
    "Head": {"name": "DBHead", "k": 50},
}


@pytest.mark.parametrize(
    "name, widths", [("large", [16, 24, 56, 480]), ("small", [8, 16, 24, 288])]
)  # PaddleOCR's det_mv3 x0.5 stage widths
def test_backbone_stages_at_strides_4_to_32(name, widths):
    backbone = MobileNetV3(model_name=name, scale=0.5)
    assert backbone.out_channels == widths
    features = backbone(paddle.zeros([1, 3, 64, 96]))
    assert [list(f.shape) for f in features] == [
        [1, c, 64 // s, 96 // s] for c, s in zip(widths, (4, 8, 16, 32), strict=True)
    ]


def test_db_model_outputs_and_parameter_names():
    model = DetTask().build_model({"Architecture": ARCH})
    names = {n for n, _ in model.named_parameters()}
    # PaddleOCR's structure: backbone stages, neck in/p convs, head binarize/thresh branches.
    for name in ("backbone.conv.conv.weight", "backbone.stages.0.0.expand.conv.weight",
                 "backbone.stages.1.0.se.conv1.weight", "neck.in2_conv.weight", "neck.p5_conv.weight",
                 "head.binarize.conv1.weight", "head.thresh.conv3.bias"):  # fmt: skip
        assert name in names, name
    x = paddle.to_tensor(np.random.default_rng(0).uniform(-1, 1, (2, 3, 64, 64)).astype("float32"))
    maps = model(x)
    assert list(maps.shape) == [2, 3, 64, 64]
    assert 0 <= float(maps.min()) and float(maps.max()) <= 1
    model.eval()
    prob = model(x)
    assert list(prob.shape) == [2, 1, 64, 64]
    served, shape = model(x, paddle.ones([2, 4]))
    np.testing.assert_array_equal(served.numpy(), prob.numpy())
    assert list(shape.shape) == [2, 4]


@pytest.mark.parametrize(
    "part, change, match",
    [
        ("Backbone", {"scale": 0.6}, "scale"),
        ("Backbone", {"model_name": "huge"}, "model_name"),
        ("Backbone", {"sclae": 0.5}, "did you mean 'scale'"),
        ("Neck", {"out_channels": 30}, "multiple of 4"),
        ("Head", {"k": 0}, "steepness"),
        ("Head", {"name": "DBHeed"}, "DBHead"),
    ],
)
def test_bad_architecture_is_a_config_error(part, change, match):
    arch = {**ARCH, part: {**ARCH[part], **change}}
    with pytest.raises(ConfigError, match=match):
        DetTask().build_model({"Architecture": arch})


def test_whole_network_gradients_match_finite_differences():
    """float64, training mode (batch-norm statistics per batch): backbone, neck and head weights."""
    arch = {**ARCH, "Backbone": {**ARCH["Backbone"], "scale": 0.35}, "Neck": {"name": "DBFPN", "out_channels": 32}}
    model = DetTask().build_model({"Architecture": arch})
    model.to(dtype="float64")
    rng = np.random.default_rng(0)
    x, target = paddle.to_tensor(rng.normal(size=(2, 3, 64, 64))), paddle.to_tensor(rng.uniform(size=(2, 3, 64, 64)))

    def loss():
        return ((model(x) - target) ** 2).mean()

    loss().backward()
    params = dict(model.named_parameters())
    for name in ("backbone.conv.conv.weight", "backbone.stages.2.0.depthwise.conv.weight", "neck.in5_conv.weight",
                 "head.binarize.conv2.weight", "head.thresh.conv_bn1.weight"):  # fmt: skip
        p = params[name]
        grad = p.grad.numpy().ravel()
        i = int(np.argmax(np.abs(grad)))
        values = p.numpy().copy()
        moved = []
        for step in (1e-6, -1e-6):
            shifted = values.copy().ravel()
            shifted[i] += step
            p.set_value(shifted.reshape(values.shape))
            moved.append(float(loss()))
        p.set_value(values)
        assert grad[i] == pytest.approx((moved[0] - moved[1]) / 2e-6, rel=1e-6), name
