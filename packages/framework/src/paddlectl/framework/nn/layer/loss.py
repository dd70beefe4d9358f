"""Loss layers: each keeps its constructor arguments and calls the functional loss of the same name."""

from __future__ import annotations

from ...ops import composite_losses as LX
from ...ops import cross_entropy as CE
from ...ops import ctc
from ...ops import margin_losses as ML
from ...ops import pointwise_losses as PW
from ...ops.loss_checks import REDUCTIONS, check_reduction
from .base import Layer

__all__ = [
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss",
    "KLDivLoss", "CTCLoss", "MarginRankingLoss", "SoftMarginLoss", "CosineEmbeddingLoss", "HingeEmbeddingLoss",
    "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss",
]  # fmt: skip


class CrossEntropyLoss(Layer):
    def __init__(
        self,
        weight=None,
        ignore_index=-100,
        reduction="mean",
        soft_label=False,
        axis=-1,
        use_softmax=True,
        label_smoothing=0.0,
        name=None,
    ) -> None:
        super().__init__()
        check_reduction("CrossEntropyLoss", reduction)
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
        self.soft_label, self.axis, self.use_softmax, self.label_smoothing = (
            soft_label,
            axis,
            use_softmax,
            label_smoothing,
        )

    def forward(self, input, label):
        return CE.cross_entropy(
            input, label, self.weight, self.ignore_index, self.reduction, self.soft_label, self.axis,
            self.use_softmax, self.label_smoothing,
        )  # fmt: skip


class NLLLoss(Layer):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None) -> None:
        super().__init__()
        check_reduction("NLLLoss", reduction)
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction

    def forward(self, input, label):
        return CE.nll_loss(input, label, self.weight, self.ignore_index, self.reduction)


class _Reduced(Layer):
    """A loss whose only setting is ``reduction``."""

    _fn = None

    def __init__(self, reduction="mean", name=None) -> None:
        super().__init__()
        check_reduction(type(self).__name__, reduction)
        self.reduction = reduction

    def forward(self, input, label):
        return type(self)._fn(input, label, self.reduction)


class MSELoss(_Reduced):
    _fn = staticmethod(PW.mse_loss)


class L1Loss(_Reduced):
    _fn = staticmethod(PW.l1_loss)


class SmoothL1Loss(Layer):
    def __init__(self, reduction="mean", delta=1.0, is_huber=True, name=None) -> None:
        super().__init__()
        check_reduction("SmoothL1Loss", reduction)
        self.reduction, self.delta, self.is_huber = reduction, delta, is_huber

    def forward(self, input, label):
        return PW.smooth_l1_loss(input, label, self.reduction, self.delta, self.is_huber)


class BCELoss(Layer):
    def __init__(self, weight=None, reduction="mean", name=None) -> None:
        super().__init__()
        check_reduction("BCELoss", reduction)
        self.weight, self.reduction = weight, reduction

    def forward(self, input, label):
        return PW.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(Layer):
    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None) -> None:
        super().__init__()
        check_reduction("BCEWithLogitsLoss", reduction)
        self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight

    def forward(self, logit, label):
        return PW.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction, self.pos_weight)


class KLDivLoss(Layer):
    def __init__(self, reduction="mean", log_target=False) -> None:
        super().__init__()
        check_reduction("KLDivLoss", reduction, (*REDUCTIONS, "batchmean"))
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, label):
        return PW.kl_div(input, label, self.reduction, self.log_target)


class CTCLoss(Layer):
    def __init__(self, blank=0, reduction="mean", zero_infinity=False) -> None:
        super().__init__()
        check_reduction("CTCLoss", reduction)
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, labels, input_lengths, label_lengths, norm_by_times=False):
        return ctc.ctc_loss(
            log_probs, labels, input_lengths, label_lengths, self.blank, self.reduction, norm_by_times,
            self.zero_infinity,
        )  # fmt: skip


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
MultiMarginLoss = _loss_layer(
    "MultiMarginLoss", ML.multi_margin_loss, 2, p=1, margin=1.0, weight=None, reduction="mean"
)
MultiLabelMarginLoss = _loss_layer("MultiLabelMarginLoss", ML.multi_label_margin_loss, 2, reduction="mean")
TripletMarginWithDistanceLoss = _loss_layer(
    "TripletMarginWithDistanceLoss", ML.triplet_margin_with_distance_loss, 3, distance_function=None, margin=1.0,
    swap=False, reduction="mean",
)  # fmt: skip
