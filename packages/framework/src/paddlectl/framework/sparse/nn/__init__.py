"""``paddle.sparse.nn``: layers over COO/CSR tensors."""

from . import functional
from .activation import LeakyReLU, ReLU, ReLU6, Softmax
from .conv import Conv2D, Conv3D, SubmConv2D, SubmConv3D
from .norm import BatchNorm, SyncBatchNorm
from .pooling import MaxPool3D

__all__ = [
    "functional", "ReLU", "ReLU6", "LeakyReLU", "Softmax", "BatchNorm", "SyncBatchNorm", "Conv2D", "Conv3D",
    "SubmConv2D", "SubmConv3D", "MaxPool3D",
]  # fmt: skip
