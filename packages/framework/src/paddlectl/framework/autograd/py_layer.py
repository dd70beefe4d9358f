"""``paddle.autograd.PyLayer``: an op written in Python, forward and backward, as one generic op.

Every ``F.apply(...)`` is a call of the one record ``py_layer`` whose attr ``layer`` (a ``_Call``)
names the PyLayer class and the non-tensor arguments. Its ``forward`` runs the user's ``forward``
on Tensors under no_grad; its ``vjp`` runs the user's ``backward``, handing it the graph-connected
inputs and outputs wherever ``save_for_backward`` kept a forward input or output. So a backward
made of ops is itself recorded under ``paddle.grad(create_graph=True)`` (higher derivatives),
and under ``jit.to_static`` it is traced into the program like any vjp, while the forward is one
``py_layer`` operation that the executor runs by calling the user's code.

Shapes under tracing: each output dim takes the symbolic size of the input axis it equalled when
traced (the same axis of an input of the same rank first), or keeps its traced size; tracing at a
second size reports a PyLayer whose output sizes follow the inputs some other way. A program holding a
PyLayer calls Python code: it runs in-process, and a saved one keeps only the class's name, so
loading it is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.autograd import no_grad
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.tensor import Tensor
from ..errors import ConversionError, ShapeError

__all__ = ["PyLayer", "PyLayerContext"]


class PyLayerContext:
    """What a PyLayer's ``forward`` leaves for its ``backward`` (the ``ctx`` both receive)."""

    def __init__(self) -> None:
        self.container: tuple = ()
        self.not_inplace_tensors: tuple = ()
        self.non_differentiable: tuple = ()
        self.materialize_grads = True
        self.grad_in_dtype_consistent = True
        self._graph: dict[int, Tensor] = {}  # id of a forward-time Tensor -> its graph-connected twin

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (inputs, outputs or others of ``forward``) for ``saved_tensor()``."""
        self.container = tensors

    def saved_tensor(self) -> tuple:
        """The saved tensors; forward inputs and outputs come back connected to the graph, so a
        backward made of ops is differentiable again."""
        return tuple(self._graph.get(id(t), t) if isinstance(t, Tensor) else t for t in self.container)

    def mark_not_inplace(self, *args) -> None:
        """Accepted for Paddle's API: an output that is an input is always returned as a new Tensor."""
        self.not_inplace_tensors = args

    def mark_non_differentiable(self, *args) -> None:
        """These outputs get ``stop_gradient=True``; backward still receives a (zero) gradient for each."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Paddle's switch between zero-filled and None gradients for outputs nothing used. Here the
        engine always fills zeros for a multi-output op, so ``False`` is accepted and changes nothing."""
        self.materialize_grads = bool(value)

    def set_grad_in_dtype_consistent(self, flag: bool) -> None:
        """Whether backward receives each output gradient cast to that output's dtype (default True)."""
        self.grad_in_dtype_consistent = bool(flag)


class PyLayer:
    """Subclass with ``@staticmethod forward(ctx, *args, **kwargs)`` returning a Tensor or a
    tuple of Tensors and ``@staticmethod backward(ctx, *output_grads)`` returning one gradient per
    Tensor argument of ``forward``; call ``F.apply(*args, **kwargs)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for PyLayer.")

    @staticmethod
    def backward(ctx, *args):
        raise NotImplementedError("You must implement the backward function for PyLayer.")

    @classmethod
    def apply(cls, *args, **kwargs):
        call = _Call(cls, args, kwargs)
        out = py_layer_op(*call.tensors, layer=call)
        outs = out if isinstance(out, tuple) else (out,)
        for j in call.non_differentiable:
            outs[j].stop_gradient = True
        return list(outs) if call.returns_list else out


class _Call(str):
    """One ``apply``: the class, the arguments with each Tensor replaced by its input slot, and
    what the latest forward learned (output shape rule, non-differentiable outputs).

    It is the op's attr, and a ``str`` whose text is the class and the non-tensor arguments: the
    IR printer writes it, and the tracer, which traces at two sizes and compares the programs'
    text, refuses a PyLayer whose arguments were computed from a concrete size. Read back from
    text it is a plain string, which ``forward`` refuses: a saved program cannot run Python code."""

    def __new__(cls, layer, args: tuple, kwargs: dict):
        if not (isinstance(layer, type) and issubclass(layer, PyLayer)):
            raise TypeError(f"PyLayer.apply: {layer!r} is not a PyLayer subclass")
        slots = iter(range(sum(isinstance(v, Tensor) for v in (*args, *kwargs.values()))))
        shown = [f"%{next(slots)}" if isinstance(a, Tensor) else repr(a) for a in args]
        shown += [f"{k}=" + (f"%{next(slots)}" if isinstance(v, Tensor) else repr(v)) for k, v in kwargs.items()]
        return super().__new__(cls, f"PyLayer {layer.__module__}.{layer.__qualname__}({', '.join(shown)})")

    def __init__(self, layer, args: tuple, kwargs: dict) -> None:
        self.cls = layer
        self.tensors: list[Tensor] = []
        self.args = tuple(self._slot(a) for a in args)
        self.kwargs = {k: self._slot(v) for k, v in kwargs.items()}
        self.out_dims: tuple | None = None  # per output, per dim: (input, axis) it has its size from, or None
        self.out_specs: tuple = ()
        self.non_differentiable: tuple[int, ...] = ()
        self.multi = False  # forward returned a tuple or list (so the op has a tuple of outputs)
        self.returns_list = False

    def _slot(self, value):
        if isinstance(value, Tensor):
            self.tensors.append(value)
            return _Slot(len(self.tensors) - 1)
        return value

    def rebuild(self, tensors: list) -> tuple[tuple, dict]:
        def fill(v):
            return tensors[v.index] if isinstance(v, _Slot) else v

        return tuple(fill(a) for a in self.args), {k: fill(v) for k, v in self.kwargs.items()}


def _live(layer) -> _Call:
    if not isinstance(layer, _Call):
        raise ConversionError(
            f"op py_layer ({layer}) runs Python code, which a saved program does not hold; keep the PyLayer in "
            "the process (jit.to_static runs it) or rewrite it with ops before saving the model"
        )
    return layer


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _forward(ctx, *arrays, layer: _Call):
    layer = _live(layer)
    inputs = [Tensor._wrap(a) for a in arrays]
    pyctx = PyLayerContext()
    args, kwargs = layer.rebuild(inputs)
    with no_grad():
        out = layer.cls.forward(pyctx, *args, **kwargs)
    layer.multi, layer.returns_list = isinstance(out, list | tuple), isinstance(out, list)
    outs = tuple(out) if isinstance(out, list | tuple) else (out,)
    bad = [type(o).__name__ for o in outs if not isinstance(o, Tensor)]
    if not outs or bad:
        raise TypeError(
            f"{layer.cls.__qualname__}.forward must return a Tensor or a tuple/list of Tensors, got {bad or 'nothing'}; "
            "return other values through ctx attributes"
        )
    results = tuple(np.array(o._data, copy=True) if any(o._data is a for a in arrays) else o._data for o in outs)
    layer.non_differentiable = tuple(j for j, o in enumerate(outs) if any(o is m for m in pyctx.non_differentiable))
    layer.out_dims = tuple(_dim_sources(r.shape, arrays) for r in results)
    layer.out_specs = tuple(Spec(r.shape, r.dtype) for r in results)
    ctx.save(pyctx, inputs, outs)
    return results if layer.multi else results[0]


def _dim_sources(shape: tuple, arrays: tuple) -> tuple:
    """Where each output dim's size comes from: the same axis of an input of the same rank, else
    any input axis of that size, else nowhere (a fixed size)."""
    sources = []
    for k, size in enumerate(shape):
        same_axis = [(i, k) for i, a in enumerate(arrays) if a.ndim == len(shape) and a.shape[k] == size]
        any_axis = [(i, j) for i, a in enumerate(arrays) for j, n in enumerate(a.shape) if n == size]
        sources.append((same_axis + any_axis + [None])[0])
    return tuple(sources)


def _infer(*specs, layer: _Call):
    layer = _live(layer)
    if layer.out_dims is None:
        raise ValueError(f"the output shapes of {layer} are known once its forward has run")
    out = tuple(
        Spec(
            tuple(n if src is None else specs[src[0]].shape[src[1]] for n, src in zip(spec.shape, dims, strict=True)),
            spec.dtype,
        )
        for dims, spec in zip(layer.out_dims, layer.out_specs, strict=True)
    )
    return out if layer.multi else out[0]


def _vjp(ctx, *grads):
    layer = ctx.attrs["layer"]
    pyctx, inputs, outs = ctx.saved
    graph = {id(t): ctx.input(i) for i, t in enumerate(inputs)}
    graph.update({id(t): ctx.output(j) for j, t in enumerate(outs)})
    pyctx._graph = graph
    if pyctx.grad_in_dtype_consistent:
        grads = tuple(
            g if g is None or g.dtype == o.dtype else g.astype(o.dtype) for g, o in zip(grads, outs, strict=True)
        )
    result = layer.cls.backward(pyctx, *grads)
    result = tuple(result) if isinstance(result, list | tuple) else (result,)
    name = layer.cls.__qualname__
    if len(result) != len(inputs):
        raise ValueError(
            f"{name}.backward returned {len(result)} gradient(s); forward took {len(inputs)} Tensor argument(s), "
            "and backward must return one per Tensor argument (None where it has none)"
        )
    for i, (g, x, need) in enumerate(zip(result, inputs, ctx.needs_input_grad, strict=True)):
        if g is None:
            if need:
                raise ValueError(
                    f"{name}.backward returned None for Tensor argument {i}, which requires a gradient; return a Tensor"
                )
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"{name}.backward must return Tensors (or None), got {type(g).__name__} for argument {i}")
        if tuple(g.shape) != tuple(x.shape):
            raise ShapeError(
                f"{name}.backward: the gradient of argument {i} has shape {g.shape}, the argument {x.shape}"
            )
    return result


class _Scale(PyLayer):
    """The conformance sweep's sample: ``a * tanh(x) + b * y`` with its backward written by hand
    (from the saved output, so second derivatives go through ``saved_tensor``)."""

    @staticmethod
    def forward(ctx, x, y, a=1.0, b=1.0):
        t = x.tanh()
        ctx.save_for_backward(t)
        ctx.a, ctx.b = a, b
        return t * a + y * b, t

    @staticmethod
    def backward(ctx, g, g_t):
        (t,) = ctx.saved_tensor()
        return (g * ctx.a + g_t) * (1 - t * t), g * ctx.b


def _samples(rng) -> Sequence[Sample]:
    x, y = rng.uniform(-1.0, 1.0, (3, 4)), rng.uniform(-1.0, 1.0, (3, 4))
    return [Sample((x, y), {"layer": _Call(_Scale, (Tensor._wrap(x), Tensor._wrap(y)), {"a": 2.0, "b": -0.5})})]


py_layer_op = OpDef("py_layer", _forward, _vjp, _infer, OPAQUE, deterministic=False, samples=_samples)
