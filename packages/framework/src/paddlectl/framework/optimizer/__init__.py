"""``paddle.optimizer``: optimizers, learning-rate schedulers (``lr``), weight decay and clipping."""

from . import lr, regularizer
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .momentum import Momentum
from .optimizer import Optimizer
from .rmsprop import RMSProp
from .sgd import SGD

__all__ = [
    "Optimizer",
    "SGD",
    "Momentum",
    "Adam",
    "AdamW",
    "RMSProp",
    "Adagrad",
    "lr",
    "regularizer",
    "ClipGradByGlobalNorm",
    "ClipGradByNorm",
    "ClipGradByValue",
]
