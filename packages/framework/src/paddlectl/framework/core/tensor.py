"""Tensor: an ndarray plus what autograd needs; Paddle's semantics (``stop_gradient`` True for data)."""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import ConfigError, ShapeError
from .dtype import as_array
from .printing import array_options
from .state import STATE

_names = itertools.count()


class Tensor:
    """A value in the dynamic graph. Operators and most methods are attached by ``ops``, and
    ``backward`` by ``core.autograd`` (the engine it runs makes Tensors, so it sits above this module)."""

    __slots__ = (
        "_data",
        "stop_gradient",
        "_grad",
        "_node",
        "_out_index",
        "_hooks",
        "name",
        "persistable",
        "_version",  # in-place writes so far (``inplace_version``); unset until the first one
        "__weakref__",
    )
    __array_priority__ = 100  # ndarray op Tensor defers to Tensor's reflected operators

    def __init__(self, data=None, dtype=None, stop_gradient: bool = True, name: str | None = None) -> None:
        self._data = as_array(np.empty((0,), dtype="float32") if data is None else data, dtype)
        self.stop_gradient = stop_gradient
        self._grad = None
        self._node = None
        self._out_index = 0
        self._hooks = None
        self.name = name if name is not None else f"generated_tensor_{next(_names)}"
        self.persistable = False

    @classmethod
    def _wrap(cls, array: np.ndarray) -> Tensor:
        """Wrap an op's output without copying or converting it (the hot path)."""
        t = cls.__new__(cls)
        t._data = array if isinstance(array, np.ndarray) else np.asarray(array)
        t.stop_gradient = True
        t._grad = None
        t._node = None
        t._out_index = 0
        t._hooks = None
        t.name = None
        t.persistable = False
        return t

    # ----- facts -----------------------------------------------------------------
    @property
    def shape(self) -> list[int]:
        return list(self._data.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    def numel(self) -> int:
        return int(self._data.size)

    @property
    def place(self) -> str:
        return "Place(cpu)"

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is None:
            self._grad = None
            return
        array = value._data if isinstance(value, Tensor) else value
        self._grad = Tensor._wrap(np.array(array, dtype=self._data.dtype, copy=True))

    # ----- conversion ------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, "numpy()")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, "numpy.asarray()")
        return self._data if dtype is None else self._data.astype(dtype)

    def item(self, *index):
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, "item()")
        if not index and self._data.size != 1:
            raise ValueError(f"item() needs a tensor of one element, this one has shape {self.shape}; index it first")
        return self._data.item(*index)

    def tolist(self):
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, "tolist()")
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-D tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, "bool()")
        return bool(self._data)

    def _one_value(self, what: str):
        """The element of a one-element tensor of any rank ([1] as well as [], as Paddle's)."""
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, what)
        if self._data.size != 1:
            raise TypeError(
                f"{what} of a tensor of shape {self.shape}: only one-element tensors convert to Python scalars"
            )
        return self._data.item()

    def __float__(self) -> float:
        return float(self._one_value("float()"))

    def __int__(self) -> int:
        return int(self._one_value("int()"))

    def __index__(self) -> int:
        if STATE.tracer is not None:
            STATE.tracer.on_python_value(self, "an index (__index__)")
        return int(self._data)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="       ", **array_options(self._data))
        return (
            f"Tensor(shape={self.shape}, dtype={self.dtype.name}, place={self.place}, "
            f"stop_gradient={self.stop_gradient},\n       {body})"
        )

    # ----- autograd --------------------------------------------------------------
    def _accumulate_grad(self, grad: Tensor) -> None:
        if self._hooks:
            grad = _apply_hooks(self._hooks, grad)
        if grad._node is not None:  # a differentiable gradient (create_graph): keep its place in the graph
            grad = grad if self._grad is None else self._grad + grad
            self._grad = Tensor._wrap(np.array(grad._data, dtype=self._data.dtype, copy=True))
            self._grad.stop_gradient = False
            self._grad._node, self._grad._out_index = grad._node, grad._out_index
        elif self._grad is None or self._grad._node is not None:
            # A private copy: vjps may hand the same array to several inputs.
            base = grad._data if self._grad is None else (self._grad + grad)._data
            self._grad = Tensor._wrap(np.array(base, dtype=self._data.dtype, copy=True))
        else:
            np.add(self._grad._data, grad._data, out=self._grad._data)

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Zero the gradient in place (Paddle's default) or drop it; the array is always our own copy.
        A row-sparse gradient is dropped, as Paddle's: its rows are the next backward's to choose."""
        if self._grad is None:
            return
        if set_to_zero and not self._grad.is_selected_rows():
            self._grad._data.fill(0)
        else:
            self._grad = None

    clear_grad = clear_gradient

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
        if self.stop_gradient:
            raise RuntimeError("register_hook on a tensor with stop_gradient=True: it never receives a gradient")
        if self._node is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if self._node.hooks is None:
                self._node.hooks = {}
            hooks = self._node.hooks.setdefault(self._out_index, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def retain_grads(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward (leaves keep theirs anyway)."""
        if self._node is not None and not self.stop_gradient:
            self.register_hook(lambda grad: self._accumulate_grad(grad))

    def detach_(self) -> Tensor:
        self._node = None
        self.stop_gradient = True
        return self

    def set_value(self, value) -> None:
        """Overwrite the data in place (shape and dtype kept), as parameters loading weights do."""
        array = np.asarray(value._data if isinstance(value, Tensor) else value)
        if array.shape != self._data.shape:
            raise ShapeError(f"set_value on {self.name}: got shape {list(array.shape)}, expected {self.shape}")
        self._data = array.astype(self._data.dtype, copy=True)


def _apply_hooks(hooks, grad):
    for hook in hooks:
        result = hook(grad)
        if result is not None:
            grad = result if isinstance(result, Tensor) else Tensor._wrap(np.asarray(result, dtype=grad.dtype))
    return grad


class _HookHandle:
    def __init__(self, hooks: list, hook) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Parameter(Tensor):
    """A trainable tensor owned by a Layer (Paddle's ``EagerParamBase``): stop_gradient=False."""

    __slots__ = ("optimize_attr", "regularizer", "need_clip", "do_model_average", "_init_func")

    def __init__(self, data, name: str | None = None, trainable: bool = True) -> None:
        super().__init__(data, name=name if name is not None else f"param_{next(_names)}")
        self.stop_gradient = not trainable
        self.persistable = True
        self.optimize_attr = {"learning_rate": 1.0}
        self.regularizer = None
        self.need_clip = True
        self.do_model_average = None
        self._init_func = None  # set while a parameter made under paddle.LazyGuard awaits its values

    def _is_initialized(self) -> bool:
        return self._init_func is None

    def initialize(self) -> None:
        """Draw the values of a parameter created under ``paddle.LazyGuard`` (from the random
        stream as it is now, as Paddle draws them)."""
        if self._init_func is None:
            raise ConfigError(f"initialize: {self.name} has its values already (it was not created under LazyGuard)")
        self.set_value(self._init_func())
        self._init_func = None

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.stop_gradient = not value

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
