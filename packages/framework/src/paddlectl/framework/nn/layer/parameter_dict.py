"""``paddle.nn.ParameterDict``: parameters held by name, registered on the layer so that
``parameters()``, ``state_dict()`` and optimizers see them."""

from __future__ import annotations

from collections.abc import Mapping

from ...core.tensor import Parameter
from ...errors import ConfigError
from .base import Layer

__all__ = ["ParameterDict"]


class ParameterDict(Layer):
    """A dict of Parameters in insertion order; setting an existing key replaces its parameter."""

    def __init__(self, parameters=None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def update(self, parameters) -> None:
        """Add or replace from a mapping or an iterable of ``(name, parameter)`` pairs."""
        items = parameters.items() if isinstance(parameters, Mapping) else parameters
        for item in items:
            if not isinstance(item, tuple | list) or len(item) != 2:
                raise ConfigError(f"ParameterDict.update: expected (name, parameter) pairs, got {item!r}")
            self[item[0]] = item[1]

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, parameter: Parameter) -> None:
        if not isinstance(key, str):
            raise ConfigError(f"ParameterDict: keys are strings, got {key!r}")
        if key in self._parameters:  # replaced where it stands, as Paddle keeps the order
            if not isinstance(parameter, Parameter):
                raise TypeError(f"ParameterDict[{key!r}]: expected a Parameter, got {type(parameter).__name__}")
            self._parameters[key] = parameter
        else:
            self.add_parameter(key, parameter)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters
