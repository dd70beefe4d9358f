"""``paddle.jit``: to_static (tracing into a Program), InputSpec, and save/load of inference models."""

from ..static.input_spec import InputSpec
from .api import TranslatedLayer, load, save
from .switches import enable_to_static, ignore_module, set_code_level, set_verbosity
from .to_static import StaticFunction, to_static

__all__ = [
    "InputSpec", "StaticFunction", "TranslatedLayer", "enable_to_static", "ignore_module", "load", "save",
    "set_code_level", "set_verbosity", "to_static",
]  # fmt: skip
