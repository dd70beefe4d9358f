"""``paddle.sparse.nn.functional``."""

from .activation import leaky_relu, relu, relu6, softmax
from .conv import conv2d, conv3d, subm_conv2d, subm_conv2d_igemm, subm_conv3d, subm_conv3d_igemm
from .pooling import max_pool3d
from .transformer import attention

__all__ = [
    "conv2d", "conv3d", "subm_conv2d", "subm_conv3d", "subm_conv2d_igemm", "subm_conv3d_igemm", "max_pool3d",
    "relu", "relu6", "leaky_relu", "softmax", "attention",
]  # fmt: skip
