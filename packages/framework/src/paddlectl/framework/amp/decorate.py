"""``paddle.amp.decorate``: O2 stores the model's weights in the low dtype, the optimizer keeps
float32 master weights.

Batch norm layers (and, for float16, layer/instance norm) keep float32 weights as in Paddle. The
optimizer steps on float32 masters: before its update each 16-bit parameter's array is swapped for
its master (so the accumulators and the update are float32), after it the new master is rounded
back into the parameter. ``state_dict`` carries the masters as Paddle's ``master_weights``.
"""

from __future__ import annotations

import types

import numpy as np

from ..core.dtype import LOW_PRECISION, convert_dtype, float32, is_floating
from ..core.tensor import Tensor
from ..errors import ConfigError
from ..nn.layer.base import Layer
from ..nn.layer.norm import LayerNorm, _BatchNormBase, _InstanceNormBase
from .policy import low_dtype


def decorate(
    models, optimizers=None, level="O1", dtype="float16", master_weight=None, save_dtype=None, master_grad=False,
    excluded_layers=None,
):  # fmt: skip
    """O1: models and optimizers unchanged. O2: the models' weights cast to ``dtype`` (norm layers and
    ``excluded_layers`` kept float32) and the optimizers given float32 master weights."""
    if level not in ("O1", "O2"):
        raise ConfigError(f"amp.decorate: level must be 'O1' or 'O2', got {level!r}")
    low = low_dtype(dtype)
    model_list = models if isinstance(models, list) else [models]
    if not model_list or not all(isinstance(m, Layer) for m in model_list):
        raise ConfigError("amp.decorate: models must be a paddle.nn.Layer or a list of them")
    optimizer_list = [] if optimizers is None else optimizers if isinstance(optimizers, list) else [optimizers]
    if save_dtype is not None:
        if getattr(save_dtype, "name", save_dtype) not in ("float16", "bfloat16", "float32", "float64"):
            raise ConfigError(
                f"amp.decorate: save_dtype must be float16, bfloat16, float32 or float64, got {save_dtype!r}"
            )
        for model in model_list:
            _save_as(model, convert_dtype(save_dtype))
    if level == "O2":
        excluded = _excluded(excluded_layers)
        for model in model_list:
            _cast_model(model, low, excluded)
        if master_weight is not False:
            for optimizer in optimizer_list:
                use_master_weights(optimizer)
    if optimizers is None:
        return models
    return models, optimizers


def _excluded(excluded_layers) -> tuple:
    items = (
        [] if excluded_layers is None else excluded_layers if isinstance(excluded_layers, list) else [excluded_layers]
    )
    for item in items:
        if not (isinstance(item, Layer) or (isinstance(item, type) and issubclass(item, Layer))):
            raise ConfigError("amp.decorate: excluded_layers must be nn.Layer instances or types, or a list of them")
    return tuple(items)


def _keeps_fp32(layer: Layer, low, excluded: tuple) -> bool:
    if isinstance(layer, _BatchNormBase) or (
        low.name == "float16" and isinstance(layer, LayerNorm | _InstanceNormBase)
    ):
        return True
    return any(layer is e or (isinstance(e, type) and isinstance(layer, e)) for e in excluded)


def _cast_model(model: Layer, low, excluded: tuple) -> None:
    kept = set()
    for layer in model.sublayers(include_self=True):
        if _keeps_fp32(layer, low, excluded) or id(layer) in kept:
            kept.update(id(sub) for sub in layer.sublayers(include_self=True))
            continue
        for tensor in [*layer.parameters(include_sublayers=False), *layer.buffers(include_sublayers=False)]:
            if tensor.dtype == float32:
                tensor._data = tensor._data.astype(low)


def _save_as(model: Layer, dtype) -> None:
    """``model.state_dict()`` from now on gives its float tensors in ``dtype`` (Paddle's save_dtype)."""
    inner = model.state_dict

    def state_dict(self, *args, **kwargs):
        state = inner(*args, **kwargs)
        return {
            k: Tensor(v._data.astype(dtype)) if isinstance(v, Tensor) and is_floating(v.dtype) else v
            for k, v in state.items()
        }

    model.state_dict = types.MethodType(state_dict, model)


def use_master_weights(optimizer) -> None:
    """Make ``optimizer`` update float32 masters of its 16-bit parameters (idempotent)."""
    if not hasattr(optimizer, "_apply") or not hasattr(optimizer, "state_dict"):
        raise ConfigError(f"amp.decorate: {type(optimizer).__name__} is not a paddle optimizer")
    if getattr(optimizer, "_master_weights", None) is not None:
        return
    optimizer._master_weights = {}
    inner_apply, inner_state, inner_load = optimizer._apply, optimizer.state_dict, optimizer.set_state_dict

    def _apply(self, chosen, excluded):
        swapped = []
        for group in self._groups:
            for param in group["params"]:
                if param._data.dtype in LOW_PRECISION:
                    master = self._master_weights.get(param.name)
                    swapped.append((param, param._data.dtype))
                    param._data = param._data.astype(float32) if master is None else master
        try:
            return inner_apply(chosen, excluded)
        finally:
            for param, low in swapped:
                self._master_weights[param.name] = param._data
                param._data = param._data.astype(low)

    def state_dict(self):
        state = inner_state()
        if self._master_weights:
            state["master_weights"] = {name: Tensor(array) for name, array in self._master_weights.items()}
        return state

    def set_state_dict(self, state_dict):
        state = dict(state_dict)
        masters = state.pop("master_weights", {})
        for name, value in masters.items():
            self._master_weights[name] = np.array(value.numpy() if isinstance(value, Tensor) else value, dtype=float32)
        inner_load(state)

    optimizer._apply = types.MethodType(_apply, optimizer)
    optimizer.state_dict = types.MethodType(state_dict, optimizer)
    optimizer.set_state_dict = types.MethodType(set_state_dict, optimizer)
