"""``paddle.optimizer.Optimizer``: parameter groups, learning rate, clipping, weight decay, state.

One ``step()`` does what Paddle's does, in Paddle's order: for each parameter group, take the
parameters that have a gradient, clip the gradients (the group's ``grad_clip``), add weight decay
(the parameter's own regularizer, else the optimizer's), then run the subclass's fused kernel on
the parameter in place with ``lr * param.optimize_attr['learning_rate']``.

State (``state_dict``) uses Paddle's names: one tensor per accumulator and parameter, named
``{param.name}_{accumulator}_0`` (``{param.name}_{name}_{accumulator}_0`` when the optimizer has a
``name``), e.g. ``linear_0.w_0_moment1_0``, plus ``'LR_Scheduler'`` (the scheduler's own state
dict) when the learning rate is a scheduler. Loading state before the first step is allowed: the
values are kept and used when each accumulator is first created, as in Paddle.
"""

from __future__ import annotations

import numpy as np

from ..core.autograd import no_grad
from ..core.selected_rows import dense, is_sparse
from ..core.tensor import Parameter, Tensor
from ..errors import CheckpointError, ShapeError
from ..modes import in_dynamic_mode, recording
from .clip import ClipGradBase
from .lr import LambdaDecay, LRScheduler
from .regularizer import L2Decay, WeightDecayRegularizer

__all__ = ["Optimizer"]


def _as_regularizer(weight_decay):
    """Paddle turns a number into ``L2Decay(number)``; a regularizer or None passes through."""
    if weight_decay is None or isinstance(weight_decay, WeightDecayRegularizer):
        return weight_decay
    if isinstance(weight_decay, int | float) and not isinstance(weight_decay, bool):
        return L2Decay(float(weight_decay))
    raise TypeError(
        f"weight_decay must be a float, an L1Decay/L2Decay regularizer or None, got {type(weight_decay).__name__}"
    )


def attr(kind, value):
    """A hyperparameter as Paddle's kernels see it: op attributes are stored as float32, then cast
    to the parameter's dtype (invisible for float32 parameters, visible for float64 ones)."""
    return kind(np.float32(value))


def flat(tensor: Tensor) -> np.ndarray:
    """A writable 1-D view of the tensor's data, made contiguous in place first when it is not."""
    data = tensor._data
    if not (data.flags.c_contiguous and data.flags.writeable):
        data = tensor._data = np.array(data, order="C", copy=True)
    return data.reshape(-1)


def update_rows(param: Tensor, grad, states: list, kernel) -> None:
    """Row-wise update from a merged SelectedRows: gather the touched rows of the parameter and of
    its table-shaped flat ``states``, run ``kernel(param_rows, grad_rows, *state_rows)`` (the dense
    kernel, on flat copies) and write them back; untouched rows are not read or written."""
    shape, rows = param._data.shape, grad._rows
    tables = [flat(param).reshape(shape)] + [state.reshape(shape) for state in states]
    gathered = [table[rows] for table in tables]
    values = np.ascontiguousarray(grad._data, dtype=param._data.dtype).reshape(-1)
    kernel(gathered[0].reshape(-1), values, *(g.reshape(-1) for g in gathered[1:]))
    for table, g in zip(tables, gathered, strict=True):
        table[rows] = g


class Optimizer:
    """Base of every optimizer; subclasses declare their state and define ``_update``."""

    # Whether weight decay is decoupled from the gradient (AdamW): then the optimizer-level
    # regularizer is not added to gradients and groups do not rewrite ``param.regularizer``.
    _decoupled_weight_decay = False

    def __init__(self, learning_rate, parameters=None, weight_decay=None, grad_clip=None, name=None) -> None:
        if parameters is None and in_dynamic_mode():
            raise AttributeError("parameters argument given to the Optimizer should not be None in dygraph mode.")
        if isinstance(parameters, Tensor):
            raise TypeError(
                "`parameters` argument given to the optimizer should be an iterable of paddle Tensors, "
                f"but got argument type is `{type(parameters)}`."
            )
        if isinstance(parameters, dict):
            raise TypeError(
                "`parameters` argument should not get dict type, if parameter groups is needed, "
                "please set `parameters` as list of dict"
            )
        if not isinstance(learning_rate, float | LRScheduler):
            raise TypeError(f"learning rate should be float or LRScheduler, got {type(learning_rate)} here")
        if grad_clip is not None and not isinstance(grad_clip, ClipGradBase):
            raise TypeError("'grad_clip' should be an instance of GradientClipBase's derived class")
        self._parameter_list = None if parameters is None else list(parameters)  # static mode: minimize() gives them
        if self._parameter_list is not None and not self._parameter_list:
            raise ValueError("the optimizer got an empty parameter list; pass model.parameters()")
        self._name = name
        self._learning_rate = learning_rate
        self._grad_clip = grad_clip
        self.regularization = None if self._decoupled_weight_decay else _as_regularizer(weight_decay)
        self._default_dict = {"weight_decay": self.regularization, "grad_clip": grad_clip}
        self._accumulators: dict[str, dict[str, Tensor]] = {}
        self._accumulators_holder: dict = {}
        self._groups: list[dict] = []
        self._param_groups = (
            self._groups if self._parameter_list and isinstance(self._parameter_list[0], dict) else self._parameter_list
        )
        self.clear_gradients = self.clear_grad

    def _setup_groups(self, defaults: dict) -> None:
        """Called by subclasses once their defaults are known: builds the normalised group list."""
        self._default_dict.update(defaults)
        if self._parameter_list is None:
            return
        if isinstance(self._parameter_list[0], dict):
            for group in self._parameter_list:
                self._add_param_group(dict(group))
        else:
            self._check_params(self._parameter_list)
            self._groups.append({"params": list(self._parameter_list)})
        self._dtype = self._groups[0]["params"][0].dtype if self._groups[0]["params"] else np.dtype("float32")

    def _adopt_parameters(self, params: list) -> None:
        """Static mode: the program's parameters, known once ``minimize`` records the loss."""
        if self._parameter_list is None:
            self._parameter_list = self._param_groups = list(params)
            self._setup_groups({})

    @staticmethod
    def _check_params(params) -> None:
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer parameters must be Tensors (Parameters), got {type(p).__name__}")

    def _add_param_group(self, group: dict) -> None:
        if "params" not in group:
            raise ValueError(
                "params should be set in parameters if parameter groups are optimized in different options"
            )
        params = group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters should be in ordered collections,but received set, please use list instead."
            )
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        self._check_params(group["params"])
        seen = {id(p) for g in self._groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        for key, value in self._default_dict.items():
            group.setdefault(key, value)
        for param in group["params"]:
            if not self._decoupled_weight_decay:
                param.regularizer = _as_regularizer(group["weight_decay"])
            _optimize_attr(param)["learning_rate"] = group.get("learning_rate", 1.0)
        self._groups.append(group)

    # ----- learning rate ---------------------------------------------------------------------
    def get_lr(self) -> float:
        return self._learning_rate if isinstance(self._learning_rate, float) else self._learning_rate()

    def set_lr(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"The type of 'value' in optimizer.set_lr must be float, but received {type(value)}.")
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError(
                "optimizer's learning rate can't be LRScheduler when invoke this API, because this will lead to "
                "conflict; step the scheduler instead, or use set_lr_scheduler to replace it"
            )
        self._learning_rate = float(value)

    def set_lr_scheduler(self, scheduler: LRScheduler) -> None:
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(
                f"The type of 'scheduler' in optimizer.set_lr_schduler must be LRScheduler, but received {type(scheduler)}."
            )
        self._learning_rate = scheduler

    def _param_lr(self, param, lr: float):
        """The step size for one parameter, in its dtype: the global rate times its own scale."""
        kind = param._data.dtype.type
        scale = _optimize_attr(param).get("learning_rate", 1.0)
        return kind(lr) if scale == 1.0 else kind(kind(lr) * kind(scale))

    # ----- the update ------------------------------------------------------------------------
    @no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient, group by group."""
        self._apply(None, ())

    @no_grad()
    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Apply the gradients already computed by ``loss.backward()`` (Paddle does not run backward
        here in dynamic mode); ``parameters`` restricts and ``no_grad_set`` excludes parameters.
        Returns ``(None, [(param, grad), ...])`` with the gradients actually used."""
        program = recording()
        if program is not None:
            return program._minimize(self, loss, parameters, no_grad_set)
        chosen = None if parameters is None else {id(p) for p in parameters}
        excluded = tuple(no_grad_set or ())
        return None, self._apply(chosen, excluded)

    def _apply(self, chosen, excluded) -> list:
        excluded_names = {e if isinstance(e, str) else e.name for e in excluded}
        lr = self.get_lr()
        applied = []
        for group in self._groups:
            pairs = [
                (p, p.grad)
                for p in group["params"]
                if not p.stop_gradient
                and p.grad is not None
                and (chosen is None or id(p) in chosen)
                and p.name not in excluded_names
            ]
            if not pairs:
                continue
            pairs = [(p, g.merged() if is_sparse(g) else g) for p, g in pairs]
            clip = group.get("grad_clip", self._grad_clip)
            if clip is not None:
                pairs = _clipped(clip, pairs)
            for param, grad in pairs:
                if is_sparse(grad):
                    self._check_sparse(param, grad)
                    if self._regularizer(param) is None:
                        self._sparse_update(param, grad, self._param_lr(param, lr), group)
                        applied.append((param, grad))
                        continue
                array = self._regularized(param, dense(grad)._data if isinstance(grad, Tensor) else np.asarray(grad))
                if array.shape != param._data.shape:
                    raise ShapeError(
                        f"{type(self).__name__}.step: gradient of {param.name} has shape {list(array.shape)}, "
                        f"the parameter has {param.shape}"
                    )
                grad_flat = np.ascontiguousarray(array, dtype=param._data.dtype).reshape(-1)
                self._update(param, grad_flat, self._param_lr(param, lr), group)
                applied.append((param, Tensor._wrap(array)))
        return applied

    def _regularizer(self, param):
        return getattr(param, "regularizer", None) or self.regularization

    def _regularized(self, param, grad: np.ndarray) -> np.ndarray:
        """Weight decay on the whole table: a sparse gradient meeting it is densified first, as
        Paddle's ``add_n(grad, decay)`` does."""
        regularizer = self._regularizer(param)
        return grad if regularizer is None else grad + regularizer.term(param._data)

    def _check_sparse(self, param, grad) -> None:
        if grad._height != param._data.shape[0] or grad._data.shape[1:] != param._data.shape[1:]:
            raise ShapeError(
                f"{type(self).__name__}.step: sparse gradient of {param.name} is for a table of "
                f"[{grad._height}, {grad._data.shape[1]}], the parameter has {param.shape}"
            )

    def _sparse_update(self, param, grad, lr, group: dict) -> None:
        """Update ``param`` from a merged SelectedRows. Optimizers without a row-wise rule apply the
        dense update to the densified gradient (Paddle's sparse kernels of these give the same)."""
        self._update(param, np.ascontiguousarray(grad.to_dense()._data).reshape(-1), lr, group)

    def _hyper(self, group: dict, key: str):
        return group.get(key, self._default_dict[key])

    def _update(self, param, grad: np.ndarray, lr, group: dict) -> None:
        """Update ``param`` in place from its flat gradient; defined by every optimizer."""
        raise TypeError(f"{type(self).__name__} must define _update(); Optimizer is a base class")

    def clear_grad(self, set_to_zero: bool = True) -> None:
        for group in self._groups:
            for p in group["params"]:
                if not p.stop_gradient:
                    p.clear_gradient(set_to_zero)

    # ----- accumulators ----------------------------------------------------------------------
    def _accumulator(self, name: str, param, fill_value: float = 0.0, shape=None, dtype=None) -> np.ndarray:
        """The flat state array ``name`` of ``param``, created on first use (from loaded state when
        there is some, else filled with ``fill_value``)."""
        key = f"{self._name}_{name}" if self._name is not None else name
        store = self._accumulators.setdefault(key, {})
        tensor = store.get(param.name)
        if tensor is None:
            shape = tuple(param._data.shape) if shape is None else tuple(shape)
            dtype = param._data.dtype if dtype is None else np.dtype(dtype)
            var_name = f"{param.name}_{key}_0"
            # zeros come from calloc: the OS maps a page when a row is first written, so a sparse
            # table's moments cost memory for the rows updates touch (and no time to fill)
            data = np.zeros(shape, dtype=dtype) if fill_value == 0 else np.full(shape, fill_value, dtype=dtype)
            if var_name in self._accumulators_holder:
                _load_into(data, self._accumulators_holder[var_name], var_name)
            tensor = Tensor._wrap(data)
            tensor.name = var_name
            tensor.persistable = True
            store[param.name] = tensor
        return flat(tensor)

    def state_dict(self) -> dict:
        """Every accumulator tensor by its Paddle name, plus ``'LR_Scheduler'`` when one is used."""
        state = {}
        if not self._accumulators and self._accumulators_holder:
            state.update(self._accumulators_holder)
        for store in self._accumulators.values():
            for tensor in store.values():
                state[tensor.name] = tensor
        if isinstance(self._learning_rate, LRScheduler):
            state["LR_Scheduler"] = self._learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        """Load what ``state_dict()`` produced; an accumulator that exists and is missing from the
        dict, or has another shape, is refused rather than half-loaded."""
        if isinstance(self._learning_rate, LRScheduler):
            lr_state = state_dict.get("LR_Scheduler")
            if lr_state is None and not isinstance(self._learning_rate, LambdaDecay):
                raise CheckpointError(
                    "LR_Scheduler state must be included in the state dict except LambdaDecay; "
                    "save it with optimizer.state_dict() while the scheduler is attached"
                )
            if lr_state:
                self._learning_rate.set_state_dict(lr_state)
        state = {k: v for k, v in state_dict.items() if k not in ("LR_Scheduler", "master_weights")}
        for store in self._accumulators.values():
            for tensor in store.values():
                if tensor.name not in state:
                    raise CheckpointError(
                        f"optimizer Tensor {tensor.name} not found in the state dict; it was saved from a "
                        "different optimizer or model (keys present: "
                        f"{sorted(state)[:5]}{'...' if len(state) > 5 else ''})"
                    )
        for store in self._accumulators.values():
            for tensor in store.values():
                _load_into(tensor._data, state[tensor.name], tensor.name)
        self._accumulators_holder = state

    load_state_dict = set_state_dict


def _clipped(clip, pairs: list) -> list:
    """Run ``clip`` on the (merged) gradients; a sparse one comes back as plain values (clips work on
    arrays) and gets its rows back, so the update stays row-wise."""
    sparse = {id(p): g for p, g in pairs if is_sparse(g)}
    out = []
    for param, grad in clip(pairs):
        held = sparse.get(id(param))
        out.append((param, held.with_values(grad._data) if held is not None and not is_sparse(grad) else grad))
    return out


def _optimize_attr(param) -> dict:
    attr = getattr(param, "optimize_attr", None)
    if attr is None:
        attr = {"learning_rate": 1.0}
        if isinstance(param, Parameter):
            param.optimize_attr = attr
    return attr


def _load_into(target: np.ndarray, value, name: str) -> None:
    array = np.asarray(value._data if isinstance(value, Tensor) else value)
    if array.shape != target.shape:
        raise ShapeError(
            f"optimizer state {name}: saved shape {list(array.shape)}, expected {list(target.shape)}; "
            "the checkpoint belongs to a different model"
        )
    np.copyto(target, array.astype(target.dtype, copy=False))
