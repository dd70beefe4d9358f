"""Sequential, LayerList, LayerDict and ParameterList."""

from __future__ import annotations

import collections

from ...core.tensor import Parameter
from .base import Layer

__all__ = ["Sequential", "LayerList", "LayerDict", "ParameterList"]


class Sequential(Layer):
    """Layers applied in order; built from layers or from (name, layer) pairs."""

    def __init__(self, *layers) -> None:
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], dict | collections.OrderedDict):
            layers = tuple(layers[0].items())
        for i, item in enumerate(layers):
            name, layer = item if isinstance(item, tuple) else (str(i), item)
            self.add_sublayer(name, layer)

    def __getitem__(self, index):
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            return Sequential(*layers[index])
        if isinstance(index, str):
            return self._sub_layers[index]
        return layers[index]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def forward(self, x):
        for layer in self._sub_layers.values():
            x = layer(x)
        return x


class LayerList(Layer):
    def __init__(self, sublayers=None) -> None:
        super().__init__()
        for layer in sublayers or []:
            self.append(layer)

    def append(self, sublayer: Layer) -> LayerList:
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def extend(self, sublayers) -> LayerList:
        for layer in sublayers:
            self.append(layer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self._sub_layers[str(i)] = layer

    def __getitem__(self, index):
        layers = list(self._sub_layers.values())
        return LayerList(layers[index]) if isinstance(index, slice) else layers[index]

    def __setitem__(self, index: int, sublayer: Layer) -> None:
        key = list(self._sub_layers)[index]
        self._sub_layers[key] = sublayer

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())


class LayerDict(Layer):
    def __init__(self, sublayers=None) -> None:
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def update(self, sublayers) -> None:
        items = sublayers.items() if hasattr(sublayers, "items") else sublayers
        for name, layer in items:
            self.add_sublayer(name, layer)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, layer: Layer) -> None:
        self.add_sublayer(key, layer)

    def __delitem__(self, key: str) -> None:
        del self._sub_layers[key]

    def __contains__(self, key: str) -> bool:
        return key in self._sub_layers

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def keys(self):
        return self._sub_layers.keys()

    def values(self):
        return self._sub_layers.values()

    def items(self):
        return self._sub_layers.items()

    def pop(self, key: str) -> Layer:
        return self._sub_layers.pop(key)

    def clear(self) -> None:
        self._sub_layers.clear()


class ParameterList(Layer):
    def __init__(self, parameters=None) -> None:
        super().__init__()
        for p in parameters or []:
            self.append(p)

    def append(self, parameter: Parameter) -> ParameterList:
        self.add_parameter(str(len(self._parameters)), parameter)
        return self

    def __getitem__(self, index: int) -> Parameter:
        return list(self._parameters.values())[index]

    def __setitem__(self, index: int, parameter: Parameter) -> None:
        self.add_parameter(list(self._parameters)[index], parameter)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())
