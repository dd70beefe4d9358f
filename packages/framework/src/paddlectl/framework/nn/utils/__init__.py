"""``paddle.nn.utils``: functions that rewrite a layer's parameters (``spectral_norm``)."""

from .spectral_norm_hook import spectral_norm

__all__ = ["spectral_norm"]
