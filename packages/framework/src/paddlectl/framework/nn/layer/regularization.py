"""Alpha, 1-D and 3-D dropout, local response normalisation, maxout and channel shuffle layers
(ops/alpha_dropout.py, ops/lrn.py, ops/channel_mixing.py)."""

from __future__ import annotations

from ...ops import alpha_dropout as D
from ...ops.channel_mixing import channel_shuffle, maxout
from ...ops.lrn import local_response_norm
from .base import Layer

__all__ = [
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Dropout1D",
    "Dropout3D",
    "LocalResponseNorm",
    "Maxout",
    "ChannelShuffle",
]


class AlphaDropout(Layer):
    """SELU-preserving dropout of single units."""

    _fn = staticmethod(D.alpha_dropout)

    def __init__(self, p=0.5, name=None):
        super().__init__()
        self.p = p

    def forward(self, x):
        return self._fn(x, p=self.p, training=self.training)

    def extra_repr(self):
        return f"p={self.p}"


class FeatureAlphaDropout(AlphaDropout):
    """SELU-preserving dropout of whole channels."""

    _fn = staticmethod(D.feature_alpha_dropout)


class _ChannelDropout(Layer):
    _fn = None

    def __init__(self, p=0.5, data_format=None, name=None):
        super().__init__()
        self.p, self.data_format = p, data_format

    def forward(self, x):
        return type(self)._fn(x, p=self.p, training=self.training, data_format=self.data_format)

    def extra_repr(self):
        return f"p={self.p}, data_format={self.data_format}"


class Dropout1D(_ChannelDropout):
    _fn = staticmethod(D.dropout1d)

    def __init__(self, p=0.5, data_format="NCL", name=None):
        super().__init__(p, data_format)


class Dropout3D(_ChannelDropout):
    _fn = staticmethod(D.dropout3d)

    def __init__(self, p=0.5, data_format="NCDHW", name=None):
        super().__init__(p, data_format)


class LocalResponseNorm(Layer):
    """``x / (k + alpha * mean_{size channels} x^2)^beta``."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW", name=None):
        super().__init__()
        self.size, self.alpha, self.beta, self.k, self.data_format = size, alpha, beta, k, data_format

    def forward(self, x):
        return local_response_norm(x, self.size, self.alpha, self.beta, self.k, self.data_format)

    def extra_repr(self):
        return f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class Maxout(Layer):
    """The max of each group of ``groups`` channels."""

    def __init__(self, groups, axis=1, name=None):
        super().__init__()
        self.groups, self.axis = groups, axis

    def forward(self, x):
        return maxout(x, self.groups, self.axis)


class ChannelShuffle(Layer):
    """ShuffleNet's interleaving of ``groups`` channel groups."""

    def __init__(self, groups, data_format="NCHW", name=None):
        super().__init__()
        self.groups, self.data_format = groups, data_format

    def forward(self, x):
        return channel_shuffle(x, self.groups, self.data_format)
