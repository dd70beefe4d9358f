"""Blocks several architectures share, with Paddle's defaults (``paddle.vision.ops.ConvNormActivation``
and ``models._utils._make_divisible``), so layer names and shapes come out as in Paddle."""

from __future__ import annotations

from ... import nn
from ...ops.shape import flatten


def make_divisible(value: float, divisor: int = 8, min_value: int | None = None) -> int:
    """Round channels to a multiple of ``divisor`` without losing more than 10%."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class ConvNormActivation(nn.Sequential):
    """Conv2D, then ``norm_layer`` (None: none), then ``activation_layer`` (None: none), as sublayers
    ``0``, ``1``, ``2``; the convolution has a bias only when there is no norm (unless ``bias`` says)."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size=3,
        stride=1,
        padding=None,
        groups=1,
        norm_layer=nn.BatchNorm2D,
        activation_layer=nn.ReLU,
        dilation=1,
        bias=None,
    ):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        bias = norm_layer is None if bias is None else bias
        layers = [
            nn.Conv2D(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation=dilation,
                groups=groups,
                bias_attr=bias,
            )
        ]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)


def pool_and_classify(model: nn.Layer, x, pool: str, classifier: str):
    """Paddle's shared tail: ``model.<pool>`` when built ``with_pool``, then flatten and
    ``model.<classifier>`` when ``num_classes > 0`` (each sublayer exists only in that case)."""
    if model.with_pool:
        x = getattr(model, pool)(x)
    if model.num_classes > 0:
        x = getattr(model, classifier)(flatten(x, 1))
    return x
