"""Activation, reshaping, distance and patch layers: thin wrappers over the functional ops
with Paddle's constructors and parameter names."""

from __future__ import annotations

from ...ops import activation as A
from ...ops import activation_extra as AX
from ...ops import distance as D
from ...ops import loss_extra as LX
from ...ops import patches as P
from ...ops.math_extra import unflatten
from .activation import _activation_layer
from .base import Layer

__all__ = [
    "Hardtanh", "SiLU", "Tanhshrink", "Softsign", "SELU", "CELU", "GLU", "Hardshrink", "Softshrink", "LogSigmoid",
    "ThresholdedReLU", "Unflatten", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity",
    "PairwiseDistance", "Bilinear", "Unfold", "Fold", "Softmax2D", "MarginRankingLoss", "SoftMarginLoss",
]  # fmt: skip

Hardtanh = _activation_layer("Hardtanh", AX.hardtanh, min=-1.0, max=1.0)
SiLU = _activation_layer("SiLU", A.silu, inplace=False)
Tanhshrink = _activation_layer("Tanhshrink", AX.tanhshrink)
Softsign = _activation_layer("Softsign", AX.softsign)
SELU = _activation_layer("SELU", AX.selu, scale=1.0507009873554805, alpha=1.6732632423543772)
CELU = _activation_layer("CELU", AX.celu, alpha=1.0)
GLU = _activation_layer("GLU", AX.glu, axis=-1)
Hardshrink = _activation_layer("Hardshrink", AX.hardshrink, threshold=0.5)
Softshrink = _activation_layer("Softshrink", AX.softshrink, threshold=0.5)
LogSigmoid = _activation_layer("LogSigmoid", AX.log_sigmoid)
ThresholdedReLU = _activation_layer("ThresholdedReLU", AX.thresholded_relu, threshold=1.0, value=0.0)
PixelShuffle = _activation_layer("PixelShuffle", P.pixel_shuffle, upscale_factor=None, data_format="NCHW")
PixelUnshuffle = _activation_layer("PixelUnshuffle", P.pixel_unshuffle, downscale_factor=None, data_format="NCHW")


class _TwoInput(Layer):
    """A layer of two inputs whose forward is a functional op with fixed keyword arguments."""

    _fn = None

    def __init__(self, **config) -> None:
        super().__init__()
        self._config = config

    def forward(self, x, y):
        return type(self)._fn(x, y, **self._config)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._config.items())


class CosineSimilarity(_TwoInput):
    _fn = staticmethod(D.cosine_similarity)

    def __init__(self, axis: int = 1, eps: float = 1e-8) -> None:
        super().__init__(axis=axis, eps=eps)


class PairwiseDistance(_TwoInput):
    _fn = staticmethod(D.pairwise_distance)

    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False, name=None) -> None:
        super().__init__(p=p, epsilon=epsilon, keepdim=keepdim)


class Unflatten(Layer):
    def __init__(self, axis: int, shape, name=None) -> None:
        super().__init__()
        self.axis, self.shape = axis, shape

    def forward(self, x):
        return unflatten(x, self.axis, self.shape)


class Bilinear(Layer):
    """``out = x1 W x2 + b`` with ``weight [out, in1, in2]`` and ``bias [1, out]``, as Paddle stores them."""

    def __init__(self, in1_features, in2_features, out_features, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__()
        self._in1, self._in2, self._out = in1_features, in2_features, out_features
        self.weight = self.create_parameter([out_features, in1_features, in2_features], attr=weight_attr)
        self.bias = self.create_parameter([1, out_features], attr=bias_attr, is_bias=True)

    def forward(self, x1, x2):
        return D.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in1_features={self._in1}, in2_features={self._in2}, out_features={self._out}, dtype={self._dtype}"


class Unfold(Layer):
    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None) -> None:
        super().__init__()
        self._config = dict(kernel_sizes=kernel_sizes, strides=strides, paddings=paddings, dilations=dilations)

    def forward(self, x):
        return P.unfold(x, **self._config)


class Fold(Layer):
    def __init__(self, output_sizes, kernel_sizes, dilations=1, paddings=0, strides=1, name=None) -> None:
        super().__init__()
        self._config = dict(
            output_sizes=output_sizes, kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
            dilations=dilations,
        )  # fmt: skip

    def forward(self, x):
        return P.fold(x, **self._config)


class Softmax2D(Layer):
    """Softmax over the channel dim of [N, C, H, W] (or [C, H, W]) inputs."""

    def forward(self, x):
        if x.ndim not in (3, 4):
            from ...errors import ShapeError

            raise ShapeError(f"Softmax2D: expected a 3-D or 4-D input, got shape {x.shape}")
        return A.softmax(x, axis=-3)


class MarginRankingLoss(Layer):
    def __init__(self, margin=0.0, reduction="mean", name=None) -> None:
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def forward(self, input, other, label):  # noqa: A002
        return LX.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class SoftMarginLoss(Layer):
    def __init__(self, reduction="mean", name=None) -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input, label):  # noqa: A002
        return LX.soft_margin_loss(input, label, self.reduction)


def _loss_layer(name: str, fn, n_inputs: int, **defaults) -> type:
    """A loss Layer: constructor keywords are Paddle's (with its defaults), forward takes the tensors."""

    def __init__(self, *args, name=None, **kwargs):
        Layer.__init__(self)
        self._config = {**defaults, **dict(zip(defaults, args, strict=False)), **kwargs}

    def forward(self, *tensors):
        if len(tensors) != n_inputs:
            raise TypeError(f"{name}.forward takes {n_inputs} tensors, got {len(tensors)}")
        return fn(*tensors, **self._config)

    return type(name, (Layer,), {"__init__": __init__, "forward": forward})


CosineEmbeddingLoss = _loss_layer("CosineEmbeddingLoss", LX.cosine_embedding_loss, 3, margin=0, reduction="mean")
HingeEmbeddingLoss = _loss_layer("HingeEmbeddingLoss", LX.hinge_embedding_loss, 2, margin=1.0, reduction="mean")
TripletMarginLoss = _loss_layer(
    "TripletMarginLoss", LX.triplet_margin_loss, 3, margin=1.0, p=2.0, epsilon=1e-6, swap=False, reduction="mean"
)
PoissonNLLLoss = _loss_layer(
    "PoissonNLLLoss", LX.poisson_nll_loss, 2, log_input=True, full=False, epsilon=1e-8, reduction="mean"
)
GaussianNLLLoss = _loss_layer("GaussianNLLLoss", LX.gaussian_nll_loss, 3, full=False, epsilon=1e-6, reduction="mean")
MultiLabelSoftMarginLoss = _loss_layer(
    "MultiLabelSoftMarginLoss", LX.multi_label_soft_margin_loss, 2, weight=None, reduction="mean"
)
__all__ += [
    "CosineEmbeddingLoss", "HingeEmbeddingLoss", "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss",
    "MultiLabelSoftMarginLoss",
]  # fmt: skip
