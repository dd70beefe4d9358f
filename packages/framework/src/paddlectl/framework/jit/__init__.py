"""``paddle.jit``: to_static (tracing into a Program), InputSpec, and save/load of inference models."""

from ..static.input_spec import InputSpec
from .api import TranslatedLayer, load, save
from .to_static import StaticFunction, to_static

__all__ = ["InputSpec", "StaticFunction", "TranslatedLayer", "load", "save", "to_static"]
