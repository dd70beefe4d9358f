"""``paddle.vision.models._utils``: Paddle documents ``IntermediateLayerGetter`` here, so it lives here."""

from __future__ import annotations

from ... import nn
from ...errors import ConfigError
from ...ops.shape import flatten
from ._layers import make_divisible as _make_divisible  # noqa: F401 - Paddle's name in this module


class IntermediateLayerGetter(nn.LayerDict):
    """A model's direct children up to the last one ``return_layers`` names, run in registration
    order; ``forward`` returns ``{new_name: output}`` for the named ones. As in Paddle, this holds
    only for models that call each child once, in the order they registered them."""

    def __init__(self, model: nn.Layer, return_layers: dict) -> None:
        children = list(model.named_children())
        names = [name for name, _ in children]
        wanted = {str(k) for k in return_layers}
        if not wanted or not wanted <= set(names):
            raise ConfigError(
                f"IntermediateLayerGetter: return_layers {sorted(wanted)} must name direct sublayers of the "
                f"model, from {names}"
            )
        last = max(names.index(name) for name in wanted)
        super().__init__(children[: last + 1])
        self.return_layers = return_layers

    def forward(self, x):
        wanted = {str(k): v for k, v in self.return_layers.items()}
        out = {}
        for name, layer in self.items():
            first = layer.sublayers()[0] if layer.sublayers() else layer
            if x.ndim == 4 and isinstance(first, nn.Linear):  # a head after a feature map: flatten, as Paddle
                x = flatten(x, 1)
            x = layer(x)
            if name in wanted:
                out[wanted[name]] = x
        return out
