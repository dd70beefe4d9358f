"""``paddle.optimizer``: optimizers, learning-rate schedulers (``lr``), weight decay and clipping."""

from . import lr, regularizer
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .lamb import Lamb
from .lbfgs import LBFGS
from .momentum import Momentum
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSProp
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "Optimizer",
    "SGD",
    "Momentum",
    "Adam",
    "AdamW",
    "RMSProp",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "ASGD",
    "Lamb",
    "LBFGS",
    "NAdam",
    "RAdam",
    "Rprop",
    "lr",
    "regularizer",
    "ClipGradByGlobalNorm",
    "ClipGradByNorm",
    "ClipGradByValue",
]
