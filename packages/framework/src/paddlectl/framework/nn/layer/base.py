"""``paddle.nn.Layer``: the container of parameters, buffers and sublayers that every model is built from."""

from __future__ import annotations

import collections
import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.dtype import convert_dtype, get_default_dtype, is_floating
from ...core.tensor import Parameter, Tensor
from ...errors import DTypeError, ShapeError
from .. import initializer as init
from ..lazy_init import lazy

_layer_counter = collections.defaultdict(itertools.count)


def _snake(class_name: str) -> str:
    """Paddle's layer scope names: ``BatchNorm2D`` -> ``batch_norm2d``, ``PReLU`` -> ``p_re_lu``."""
    words = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", class_name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()


@dataclass
class ParamAttr:
    """How a parameter is made (Paddle: ``paddle.ParamAttr``)."""

    name: str | None = None
    initializer: Any = None
    learning_rate: float = 1.0
    regularizer: Any = None
    trainable: bool = True
    do_model_average: bool = True
    need_clip: bool = True

    @staticmethod
    def resolve(attr) -> ParamAttr | None:
        """Paddle accepts a ParamAttr, a name, an initializer, None (defaults) or False (no parameter)."""
        if attr is False:
            return None
        if attr is None or attr is True:
            return ParamAttr()
        if isinstance(attr, ParamAttr):
            return attr
        if isinstance(attr, str):
            return ParamAttr(name=attr)
        if isinstance(attr, init.Initializer):
            return ParamAttr(initializer=attr)
        raise TypeError(
            f"weight_attr/bias_attr must be a ParamAttr, a name, an initializer, None or False; got {attr!r}"
        )


class _HookHandle:
    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


class Layer:
    """Base of all layers. Subclasses define ``forward``; parameters and sublayers assigned as
    attributes are registered automatically, in assignment order."""

    def __init__(self, name_scope: str | None = None, dtype="float32") -> None:
        scope = name_scope or _snake(type(self).__name__)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_sub_layers", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistable_buffer_names", set())
        object.__setattr__(self, "_forward_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_post_hooks", collections.OrderedDict())
        object.__setattr__(self, "_hook_ids", itertools.count())
        self.training = True
        self._dtype = convert_dtype(dtype).name
        self._full_name = f"{scope}_{next(_layer_counter[scope])}"
        self._param_counters = collections.defaultdict(itertools.count)

    # ----- registration --------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if params is None and isinstance(value, Tensor | Layer):
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before assigning {name!r}")
        if isinstance(value, Parameter):
            self._remove(name)
            params[name] = value
        elif isinstance(value, Layer):
            self._remove(name)
            self._sub_layers[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} to parameter {name!r}; assign a Parameter or None"
                )
            params[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to buffer {name!r}; assign a Tensor or None")
            self._buffers[name] = value
        elif isinstance(value, Tensor):  # as in Paddle: a Tensor attribute is a non-persistable buffer
            self._remove(name)
            self._non_persistable_buffer_names.add(name)
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove(self, name: str) -> None:
        for store in (self._parameters, self._sub_layers, self._buffers):
            store.pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_sub_layers", "_buffers"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._sub_layers, self._buffers):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return [*super().__dir__(), *self._parameters, *self._sub_layers, *self._buffers]

    def create_parameter(
        self, shape, attr=None, dtype=None, is_bias=False, default_initializer=None
    ) -> Parameter | None:
        """A new parameter initialised by ``attr.initializer``, else ``default_initializer``, else
        Paddle's defaults (zeros for biases, Xavier-uniform for weights)."""
        attr = ParamAttr.resolve(attr)
        if attr is None:
            return None
        shape = [int(d) for d in shape]
        if any(d < 0 for d in shape):
            raise ShapeError(f"create_parameter: shape {shape} has a negative dimension")
        dtype = convert_dtype(dtype or self._dtype or get_default_dtype())
        initializer = (
            attr.initializer
            or init.global_initializer(is_bias)
            or default_initializer
            or (init.Constant(0.0) if is_bias else init.XavierUniform())
        )
        name = (
            attr.name
            or f"{self._full_name}.{'b' if is_bias else 'w'}_{next(self._param_counters['b' if is_bias else 'w'])}"
        )
        if lazy():  # paddle.LazyGuard: the values are drawn by param.initialize()
            param = Parameter(np.zeros(shape, dtype), name=name, trainable=attr.trainable)
            param._init_func = functools.partial(initializer.sample, tuple(shape), dtype)
        else:
            param = Parameter(initializer.sample(tuple(shape), dtype), name=name, trainable=attr.trainable)
        param.optimize_attr = {"learning_rate": attr.learning_rate}
        param.regularizer = attr.regularizer
        param.need_clip = attr.need_clip
        return param

    def add_parameter(self, name: str, parameter: Parameter | None) -> Parameter | None:
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(f"add_parameter({name!r}): expected a Parameter, got {type(parameter).__name__}")
        self._remove(name)
        self._parameters[name] = parameter
        return parameter

    def add_sublayer(self, name: str, sublayer: Layer) -> Layer:
        if not isinstance(sublayer, Layer):
            raise TypeError(f"add_sublayer({name!r}): expected a Layer, got {type(sublayer).__name__}")
        self._remove(name)
        self._sub_layers[str(name)] = sublayer
        return sublayer

    def register_buffer(self, name: str, tensor: Tensor | None, persistable: bool = True) -> None:
        """A tensor that is state but not a parameter (running statistics); saved when persistable."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer({name!r}): expected a Tensor, got {type(tensor).__name__}")
        self._remove(name)
        self._buffers[name] = tensor
        if persistable:
            self._non_persistable_buffer_names.discard(name)
        else:
            self._non_persistable_buffer_names.add(name)

    # ----- traversal -----------------------------------------------------------------------
    def named_sublayers(self, prefix: str = "", include_self: bool = False, layers_set=None, remove_duplicate=True):
        """Sublayers depth first by path; a layer reached twice is given once unless
        ``remove_duplicate=False``, which gives it under every path."""
        seen = set() if layers_set is None else layers_set
        if include_self and id(self) not in seen:
            if remove_duplicate:
                seen.add(id(self))
            yield prefix, self
        for name, layer in self._sub_layers.items():
            if layer is None or id(layer) in seen:
                continue
            path = f"{prefix}.{name}" if prefix else name
            if remove_duplicate:
                seen.add(id(layer))
            yield path, layer
            yield from layer.named_sublayers(path, False, seen, remove_duplicate)

    def sublayers(self, include_self: bool = False) -> list[Layer]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self):
        yield from ((n, layer) for n, layer in self._sub_layers.items() if layer is not None)

    def children(self):
        return [layer for _, layer in self.named_children()]

    def _named_members(self, store: str, prefix: str, include_sublayers: bool):
        seen = set()
        layers = self.named_sublayers(prefix=prefix, include_self=True) if include_sublayers else [(prefix, self)]
        for layer_prefix, layer in layers:
            for name, value in getattr(layer, store).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{layer_prefix}.{name}" if layer_prefix else name), value, layer, name

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True):
        for path, value, _, _ in self._named_members("_parameters", prefix, include_sublayers):
            yield path, value

    def parameters(self, include_sublayers: bool = True) -> list[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True):
        for path, value, _, _ in self._named_members("_buffers", prefix, include_sublayers):
            yield path, value

    def buffers(self, include_sublayers: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn) -> Layer:
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    # ----- modes ---------------------------------------------------------------------------
    def train(self) -> Layer:
        for layer in self.sublayers(include_self=True):
            layer.training = True
        return self

    def eval(self) -> Layer:
        for layer in self.sublayers(include_self=True):
            layer.training = False
        return self

    def full_name(self) -> str:
        return self._full_name

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        for p in self.parameters():
            p.clear_gradient(set_to_zero)

    def to(self, device=None, dtype=None, blocking=None) -> Layer:
        """Cast floating parameters and buffers to ``dtype`` (the device is always the CPU here)."""
        if dtype is not None:
            target = convert_dtype(dtype)
            if not is_floating(target):
                raise DTypeError(f"Layer.to: dtype must be a float dtype, got {target.name}")
            for tensor in [*self.parameters(), *self.buffers()]:
                if is_floating(tensor.dtype):
                    tensor._data = tensor._data.astype(target)
                    if tensor.grad is not None:
                        tensor.grad._data = tensor.grad._data.astype(target)
            for layer in self.sublayers(include_self=True):
                layer._dtype = target.name
        return self

    def float(self) -> Layer:
        return self.to(dtype="float32")

    def double(self) -> Layer:
        return self.to(dtype="float64")

    # ----- state ---------------------------------------------------------------------------
    def state_dict(
        self, destination=None, include_sublayers: bool = True, structured_name_prefix: str = "", use_hook: bool = True,
        *, _non_persistable: bool = False,
    ):  # fmt: skip
        """Parameters and persistable buffers by structured name (``conv1.weight``), in Paddle's
        order: each layer's own parameters, then its buffers, then its sublayers' (each asked through
        its own ``state_dict``, so a wrapper that delegates keeps its keys)."""
        out = collections.OrderedDict() if destination is None else destination
        prefix = structured_name_prefix
        for name, value in self._parameters.items():
            if value is not None:
                out[prefix + name] = value
        for name, value in self._buffers.items():
            if value is not None and (_non_persistable or name not in self._non_persistable_buffer_names):
                out[prefix + name] = value
        if include_sublayers:
            for name, layer in self.named_children():
                layer.state_dict(out, True, f"{prefix}{name}.", _non_persistable=_non_persistable)
        return out

    def to_static_state_dict(
        self, destination=None, include_sublayers: bool = True, structured_name_prefix: str = "", use_hook: bool = True,
        keep_vars: bool = True,
    ):  # fmt: skip
        """``state_dict`` with the non-persistable buffers too (what a static program holds);
        ``keep_vars=False`` gives detached tensors."""
        out = self.state_dict(destination, include_sublayers, structured_name_prefix, _non_persistable=True)
        if not keep_vars:
            for key, value in out.items():
                out[key] = value.detach()
        return out

    def set_state_dict(self, state_dict, use_structured_name: bool = True):
        """Load values in place. Returns (missing_keys, unexpected_keys); a shape or dtype mismatch
        raises, naming the key and both shapes, before anything is changed."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        updates = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            array = np.asarray(value._data if isinstance(value, Tensor) else value)
            if tuple(array.shape) != tuple(target.shape):
                raise ShapeError(
                    f"set_state_dict: {key!r} has shape {list(array.shape)} in the state dict but "
                    f"{target.shape} in the model; was the checkpoint saved from another architecture?"
                )
            if array.dtype != target.dtype and not (is_floating(array.dtype) and is_floating(target.dtype)):
                raise DTypeError(
                    f"set_state_dict: {key!r} is {array.dtype} in the state dict but {target.dtype} in the model"
                )
            updates.append((target, array))
        for target, array in updates:
            target._data = np.array(array, dtype=target.dtype, copy=True)
        return missing, unexpected

    set_dict = set_state_dict
    load_dict = set_state_dict

    # ----- calling -------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook):
        """``hook(layer, inputs)`` runs before forward; a non-None result replaces the inputs."""
        key = next(self._hook_ids)
        self._forward_pre_hooks[key] = hook
        return _HookHandle(self._forward_pre_hooks, key)

    def register_forward_post_hook(self, hook):
        """``hook(layer, inputs, outputs)`` runs after forward; a non-None result replaces the outputs."""
        key = next(self._hook_ids)
        self._forward_post_hooks[key] = hook
        return _HookHandle(self._forward_post_hooks, key)

    def forward(self, *inputs, **kwargs):
        raise TypeError(f"{type(self).__name__} does not define forward(); subclasses of Layer must")

    def __call__(self, *inputs, **kwargs):
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                result = hook(self, inputs)
                if result is not None:
                    inputs = result if isinstance(result, tuple) else (result,)
        outputs = self.forward(*inputs, **kwargs)
        if self._forward_post_hooks:
            for hook in list(self._forward_post_hooks.values()):
                result = hook(self, inputs, outputs)
                if result is not None:
                    outputs = result
        return outputs

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(layer).replace("\n", "\n  ") for name, layer in self.named_children()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"
