"""Tracing: run a function on example inputs and record every op call as IR.

The tracer sits on ``STATE.tracer``, so every op goes through the same dispatch as in eager mode;
``record`` runs the op for real (the example values keep Python code that reads shapes working)
and adds an Operation whose output types come from the op's shape rule over symbolic dims. A
concrete result that disagrees with the shape rule is reported.

Python code can still compute an attr from a *concrete* size (``x.reshape([x.shape[0], 4])``);
such a program would be wrong for other sizes. ``trace`` therefore traces twice, with different
example sizes for every symbol, and refuses (naming the op and line) when the two programs
differ. Reading a traced value into Python (``bool()``, ``.numpy()``, ``.item()`` ...), using a
value from inside a ``cond`` branch outside it, and writing in place into captured state (a
parameter, a buffer, a closed-over tensor) raise ConversionError with the user's file:line and
the way out.

The tape is kept while tracing (in the caller's grad mode), so a function that computes a loss and
calls ``paddle.grad`` records its backward too: every vjp runs through
dispatch, hence through ``record``, and the static program holds the backward ops. A tensor that
merely re-wraps a traced value's array (``paddle.grad`` returns such) stands for that value.
``loss.backward()`` works too: ``p.grad`` read inside the function is the gradient of that call's
backward passes (the program returns it; it does not accumulate into ``.grad`` across calls), and
tracing leaves every captured tensor's ``.grad`` as it found it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np

from ..core import symbolic
from ..core.dispatch import apply
from ..core.state import STATE
from ..core.tensor import Parameter, Tensor
from ..errors import ConversionError, PaddlectlError
from .ir import Block, Operation, Program, Value
from .verifier import infer_outputs, verify

_FRAMEWORK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USER_CODE_INSIDE = (os.path.join(_FRAMEWORK, "vision", ""),)
CONSTANT_INLINE_LIMIT = 64
"""Captured non-parameter tensors up to this many elements are inlined as ``constant`` attrs;
larger ones become weights (``const.K``)."""

WAY_OUT = (
    "use paddle.static.cond / paddle.static.while_loop for control flow on tensor values, "
    "or keep this part dynamic (outside the function given to to_static)"
)


def user_location() -> str:
    """``file.py:line`` of the innermost frame outside the framework (model code in vision/ counts)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_FRAMEWORK) or path.startswith(_USER_CODE_INSIDE):
            return f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def _normalize_attr(value):
    """Attrs as plain values the printer can write: numpy scalars to Python, lists to tuples."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return tuple(_normalize_attr(v) for v in value)
    if isinstance(value, dict):
        return {k: _normalize_attr(v) for k, v in value.items()}
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)
    return value


@dataclass
class InputSignature:
    """One traced input: feed name, shape (ints and symbol names) and dtype."""

    name: str
    shape: tuple
    dtype: np.dtype


class Tracer:
    """Records op calls into ``program``; ``bindings`` are the example sizes of the symbols."""

    def __init__(self, bindings: dict[str, int], params: dict[int, tuple[str, Tensor]]) -> None:
        self.program = Program()
        self.bindings = bindings
        self.params = params  # id(tensor) -> (weight name, tensor)
        self.values: dict[int, Value] = {}
        self.keep: list = []  # traced tensors stay alive so their ids stay unique
        self.blocks: list[Block] = [self.program.block]
        self.block_ids: list[list[int]] = [[]]
        self.dead: dict[int, str] = {}  # ids of tensors defined inside a finished branch
        self.sources: dict[int, Value] = {}
        self.owners: dict[int, int] = {}  # id(array) -> id of the traced tensor holding it
        self.leaves: dict[int, _Leaf] = {}  # captured tensors that take a gradient, by id
        self.n_const = 0

    # ----- values ------------------------------------------------------------------------------
    def bind(self, tensor: Tensor, value: Value) -> None:
        self.values[id(tensor)] = value
        self.owners[id(tensor._data)] = id(tensor)
        self.keep.append(tensor)
        self.block_ids[-1].append(id(tensor))

    def is_traced(self, tensor) -> bool:
        return id(tensor) in self.values and id(tensor) not in self.sources

    def value_of(self, tensor) -> Value | None:
        if tensor is None:
            return None
        if not isinstance(tensor, Tensor):
            raise ConversionError(f"{user_location()}: expected a Tensor input to an op, got {type(tensor).__name__}")
        key = id(tensor)
        if key not in self.values:  # a new wrapper of a traced value's array (paddle.grad's results)
            key = self.owners.get(id(tensor._data), key)
        if key not in self.values:
            grad = self._leaf_grad(tensor)
            if grad is not None:
                return self.value_of(grad)
        if key in self.dead:
            raise ConversionError(
                f"{user_location()}: a tensor computed inside a {self.dead[key]} is used outside it; "
                "return it from the branch/body so it becomes an output of the control-flow op"
            )
        if key in self.values:
            return self.values[key]
        return self._source(tensor)

    def _source(self, tensor: Tensor) -> Value:
        """A captured tensor: a layer's parameter/buffer (by its state_dict name) or a constant."""
        array = tensor._data
        if id(tensor) in self.params:
            name = self.params[id(tensor)][0]
        elif isinstance(tensor, Parameter) or tensor.persistable or array.size > CONSTANT_INLINE_LIMIT:
            name = _clean(tensor.name) if isinstance(tensor, Parameter) and tensor.name else None
            if name is None or name in self.program.weights:
                name = f"const.{self.n_const}"
                self.n_const += 1
            self.params[id(tensor)] = (name, tensor)
        else:
            name = None
        if name is not None:
            self.program.weights[name] = array
            value = self.program.new_value(array.shape, array.dtype, name)
            op = Operation("param", [], [value], {"name": name})
        else:
            value = self.program.new_value(array.shape, array.dtype)
            op = Operation("constant", [], [value], {"value": np.array(array, copy=True)})
        self.program.block.append(op)  # sources live in the main block, ahead of any use
        self.values[id(tensor)] = value
        self.sources[id(tensor)] = value
        self.keep.append(tensor)
        if not tensor.stop_gradient and tensor._node is None:
            self.leaves[id(tensor)] = _Leaf(tensor)
        return value

    # ----- gradients of captured leaves (``loss.backward()``) ----------------------------------
    def _leaf_grad(self, tensor) -> Tensor | None:
        """The traced gradient a captured leaf's ``.grad`` (``tensor``) holds, if it is one."""
        for leaf in self.leaves.values():
            if leaf.tensor._grad is tensor:
                return leaf.total
        return None

    def close(self) -> None:
        """Give every captured leaf its ``.grad`` from before the trace back."""
        for leaf in self.leaves.values():
            leaf.restore()

    # ----- the dispatch hook -------------------------------------------------------------------
    def record(self, op, inputs, attrs):
        loc = user_location()
        in_values = [self.value_of(t) for t in inputs]
        attrs = {k: _normalize_attr(v) for k, v in attrs.items()}
        out = self._run_eager(op, inputs, attrs, loc)
        try:
            specs = infer_outputs(op.name, in_values, attrs)
        except PaddlectlError as exc:
            raise ConversionError(
                f"{loc}: the output shape of {op.name} cannot be inferred symbolically for inputs "
                f"{[None if v is None else v.type_text for v in in_values]}: {exc}; give the dims involved "
                "a fixed size in the InputSpec"
            ) from None
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise ConversionError(
                f"{loc}: the shape rule of {op.name} cannot handle symbolic inputs "
                f"{[None if v is None else v.type_text for v in in_values]} ({type(exc).__name__}: {exc}); "
                "give the dims involved a fixed size in the InputSpec"
            ) from None
        arrays = out if isinstance(out, tuple) else (out,)
        if len(arrays) != len(specs):
            raise ConversionError(f"{loc}: {op.name} returned {len(arrays)} outputs, its shape rule says {len(specs)}")
        values = []
        for t, spec in zip(arrays, specs, strict=True):
            self._check_concrete(op.name, spec, t._data, loc)
            value = self.program.new_value(spec.shape, spec.dtype)
            self.bind(t, value)
            values.append(value)
        self.blocks[-1].append(Operation(op.name, in_values, values, attrs, loc=loc))
        return out

    def _run_eager(self, op, inputs, attrs, loc):
        """The op on the example values, recorded on the tape in the current grad mode."""
        STATE.tracer = None
        try:
            out = apply(op, tuple(inputs), attrs)
        except ValueError as exc:
            if "read-only" in str(exc):
                raise ConversionError(
                    f"{loc}: {op.name} writes in place into captured state (a parameter or buffer); in-place "
                    "mutation of captured state cannot be traced. Call layer.eval() before exporting, or return "
                    "the new value instead of writing it"
                ) from None
            raise
        finally:
            STATE.tracer = self
        return out

    def _check_concrete(self, name, spec, array, loc) -> None:
        # a dim whose symbols no input binds is data (nonzero's, NMS's count): only the rank is checked
        want = tuple(
            symbolic.evaluate(d, self.bindings) if symbolic.symbols(d) <= set(self.bindings) else n
            for d, n in zip(spec.shape, array.shape, strict=False)  # ranks compared below
        )
        if len(spec.shape) != array.ndim or want != tuple(array.shape) or np.dtype(spec.dtype) != array.dtype:
            raise ConversionError(
                f"{loc}: the shape rule of {name} gives {np.dtype(spec.dtype)}{list(spec.shape)} "
                f"(= {list(want)} at the example sizes {self.bindings}), but running it gave "
                f"{array.dtype}{list(array.shape)}; this op's shape cannot be inferred symbolically here"
            )

    def on_python_value(self, tensor, what: str) -> None:
        """A traced tensor's data read into Python (bool(), numpy(), item() ...): not traceable."""
        if self.is_traced(tensor) or id(tensor) in self.dead:
            raise ConversionError(
                f"{user_location()}: {what} on a traced tensor is not supported: its value is only known when the "
                f"program runs, so Python cannot branch on it or read it while tracing; {WAY_OUT}"
            )

    def on_alias(self, alias, tensor) -> None:
        """``x[i] = v`` is about to read x through ``alias``; x must be a traced value, not captured state."""
        if not self.is_traced(tensor):
            raise ConversionError(
                f"{user_location()}: in-place write into captured state ({tensor.name or 'a tensor'} is a parameter, "
                "buffer or a tensor from outside the traced function) is not supported; write into a copy made "
                "inside the function (x = x.clone()) and return it"
            )
        self.values[id(alias)] = self.value_of(tensor)
        self.keep.append(alias)

    def on_rebind(self, tensor, result) -> None:
        """After ``x[i] = v``, x stands for the op's result."""
        self.values[id(tensor)] = self.values[id(result)]

    # ----- control flow ------------------------------------------------------------------------
    def _sub_block(self, args, arg_tensors, fn, kind: str):
        """Trace ``fn(*arg_tensors)`` into a new block whose arguments ``args`` stand for them."""
        block = Block(args)
        self.blocks.append(block)
        self.block_ids.append([])
        try:
            for t, a in zip(arg_tensors, args, strict=True):
                self.bind(t, a)
            result = fn(*arg_tensors)
        finally:
            self.blocks.pop()
            for key in self.block_ids.pop():
                self.dead[key] = kind
        return block, result

    def cond(self, pred, true_fn, false_fn):
        loc = user_location()
        pred_value = self.value_of(pred)
        if pred_value.dtype != np.bool_ or any(d != 1 for d in pred_value.shape):
            raise ConversionError(f"{loc}: cond needs a bool tensor with one element, got {pred_value.type_text}")
        then_block, then_out = self._sub_block([], [], true_fn, "cond branch")
        if false_fn is None:
            raise ConversionError(f"{loc}: cond without false_fn is not traceable; give both branches")
        else_block, else_out = self._sub_block([], [], false_fn, "cond branch")
        single = isinstance(then_out, Tensor)
        then_list, else_list = _as_list(then_out, loc, "true_fn"), _as_list(else_out, loc, "false_fn")
        if len(then_list) != len(else_list):
            raise ConversionError(f"{loc}: cond branches return {len(then_list)} and {len(else_list)} tensors")
        then_block.yields = [self.value_of_yield(t) for t in then_list]
        else_block.yields = [self.value_of_yield(t) for t in else_list]
        for i, (a, b) in enumerate(zip(then_block.yields, else_block.yields, strict=True)):
            if a.shape != b.shape or a.dtype != b.dtype:
                raise ConversionError(
                    f"{loc}: cond output {i} is {a.type_text} in true_fn but {b.type_text} in false_fn; "
                    "both branches must return the same shapes and dtypes"
                )
        outs = [self.program.new_value(v.shape, v.dtype) for v in then_block.yields]
        self.blocks[-1].append(Operation("cond", [pred_value], outs, {}, [then_block, else_block], loc=loc))
        chosen = then_list if bool(pred._data.reshape(-1)[0]) else else_list
        results = []
        for t, v in zip(chosen, outs, strict=True):
            r = Tensor._wrap(t._data)
            self.bind(r, v)
            results.append(r)
        return results[0] if single else results

    def value_of_yield(self, tensor) -> Value:
        key = id(tensor)
        if key in self.dead:  # the yield of the block just closed is legal
            return self.values[key]
        return self.value_of(tensor)

    def while_loop(self, cond_fn, body_fn, loop_vars):
        loc = user_location()
        init = [self.value_of(t) for t in _as_list(loop_vars, loc, "loop_vars")]

        def fresh_args():
            args = [self.program.new_value(v.shape, v.dtype) for v in init]
            tensors = [Tensor._wrap(np.array(t._data, copy=True)) for t in loop_vars]
            return args, tensors

        args, tensors = fresh_args()
        cond_block, flag = self._sub_block(args, tensors, cond_fn, "while_loop")
        cond_block.yields = [self.value_of_yield(flag)] if isinstance(flag, Tensor) else []
        if not cond_block.yields or cond_block.yields[0].dtype != np.bool_:
            raise ConversionError(f"{loc}: while_loop's cond must return a bool tensor with one element")
        args, tensors = fresh_args()
        body_block, new = self._sub_block(args, tensors, body_fn, "while_loop")
        new_list = _as_list(new, loc, "body")
        if len(new_list) != len(init):
            raise ConversionError(f"{loc}: while_loop body returns {len(new_list)} values for {len(init)} loop vars")
        body_block.yields = [self.value_of_yield(t) for t in new_list]
        for i, (a, b) in enumerate(zip(init, body_block.yields, strict=True)):
            if a.shape != b.shape or a.dtype != b.dtype:
                raise ConversionError(
                    f"{loc}: loop var {i} is {a.type_text} before the loop but the body returns {b.type_text}; "
                    "keep each loop var's shape and dtype fixed across iterations"
                )
        outs = [self.program.new_value(v.shape, v.dtype) for v in init]
        self.blocks[-1].append(Operation("while", init, outs, {}, [cond_block, body_block], loc=loc))
        final = _eager_while(self, cond_fn, body_fn, list(loop_vars))
        results = []
        for t, v in zip(final, outs, strict=True):
            r = Tensor._wrap(t._data)
            self.bind(r, v)
            results.append(r)
        return results


class _Leaf:
    """A captured tensor that takes a gradient: its ``.grad`` starts empty in the trace, and a hook
    keeps the traced sum of what backward passes accumulate into it."""

    def __init__(self, tensor: Tensor) -> None:
        self.tensor, self.saved, self.total = tensor, tensor._grad, None
        tensor._grad = None
        self.handle = tensor.register_hook(self.add)

    def add(self, grad: Tensor) -> None:
        self.total = grad if self.total is None else self.total + grad

    def restore(self) -> None:
        self.handle.remove()
        self.tensor._grad = self.saved


def _eager_while(tracer, cond_fn, body_fn, loop_vars):
    """The loop's concrete result during tracing (the tracer is off meanwhile)."""
    STATE.tracer = None
    try:
        values = [Tensor._wrap(t._data) for t in loop_vars]
        while bool(cond_fn(*values)):
            values = list(body_fn(*values))
        return values
    finally:
        STATE.tracer = tracer


def _as_list(out, loc: str, what: str) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, list | tuple) and all(isinstance(t, Tensor) for t in out):
        return list(out)
    raise ConversionError(f"{loc}: {what} must return a Tensor or a list/tuple of Tensors, got {type(out).__name__}")


def _clean(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name)


def param_names(layer) -> dict[int, tuple[str, Tensor]]:
    """A layer's parameters and buffers by state_dict name, keyed by tensor identity."""
    if layer is None:
        return {}
    return {id(t): (_clean(name), t) for name, t in layer.state_dict().items() if isinstance(t, Tensor)}


def trace_once(fn, signatures: list[InputSignature], bindings: dict[str, int], layer=None, examples=None):
    """One trace at the given example sizes; returns (program, output structure)."""
    tracer = Tracer(bindings, param_names(layer))
    rng = np.random.default_rng(0)
    tensors = []
    for i, sig in enumerate(signatures):
        shape = tuple(symbolic.evaluate(d, bindings) for d in sig.shape)
        if examples is not None:
            data = np.asarray(examples[i], dtype=sig.dtype)
        elif sig.dtype.kind == "f":
            data = rng.standard_normal(shape).astype(sig.dtype)
        elif sig.dtype.kind == "b":
            data = rng.integers(0, 2, shape).astype(bool)
        else:
            data = rng.integers(0, 2, shape).astype(sig.dtype)
        t = Tensor._wrap(data)
        value = tracer.program.new_value(sig.shape, sig.dtype, sig.name)
        tracer.program.block.append(Operation("input", [], [value], {"name": sig.name}))
        tracer.bind(t, value)
        tensors.append(t)
    frozen = [t._data for _, t in tracer.params.values()]
    flags = [a.flags.writeable for a in frozen]
    previous = STATE.tracer
    STATE.tracer = tracer
    try:
        for a in frozen:
            a.flags.writeable = False
        out = fn(*tensors)
        structure = "tensor" if isinstance(out, Tensor) else type(out).__name__
        outs = _as_list(out, user_location(), "the traced function")
        tracer.program.block.yields = [tracer.value_of(t) for t in outs]
    finally:
        STATE.tracer = previous
        tracer.close()
        for a, f in zip(frozen, flags, strict=True):
            if f:
                a.flags.writeable = True
    return verify(tracer.program), structure


def trace(fn, signatures: list[InputSignature], layer=None, examples=None) -> tuple[Program, str]:
    """Trace ``fn`` on inputs described by ``signatures`` (symbolic dims allowed), twice at two
    example sizes, and return the program if both traces agree (see the module docstring)."""
    names = sorted({s for sig in signatures for d in sig.shape for s in symbolic.symbols(d)})
    if examples is not None:
        first = _bind_examples(signatures, examples)
    else:
        first = {n: (3 if n == "N" else 16) for n in names}
    program, structure = trace_once(fn, signatures, first, layer, examples)
    if not names:
        return program, structure
    second = {n: v + 2 for n, v in first.items()}
    try:
        other, _ = trace_once(fn, signatures, second, layer)
    except ConversionError:
        raise
    except PaddlectlError as exc:
        raise ConversionError(
            f"tracing at a second set of sizes {second} (the first was {first}) failed: {exc}. Something in the "
            "function depends on the concrete size of a symbolic dim; give that dim a fixed size in the InputSpec"
        ) from None
    a, b = str(program).splitlines(), str(other).splitlines()
    for la, lb in zip(a, b, strict=False):
        if la != lb:
            raise ConversionError(
                "the traced program depends on the concrete size of a symbolic dim (or on Python-side state that "
                f"changes between calls), so it cannot be inferred symbolically: with sizes {first} the trace "
                f"records\n  {la}\nbut with sizes {second}\n  {lb}\ncompute the value from the tensor instead of "
                "from x.shape (reshape takes 0 to copy a dim and -1 to infer one), or give that dim a fixed size in "
                "the InputSpec"
            )
    if len(a) != len(b):
        raise ConversionError(
            f"the traced program has {len(a)} lines with sizes {first} but {len(b)} with {second}: Python code "
            f"branches on a concrete size; {WAY_OUT}, or give that dim a fixed size in the InputSpec"
        )
    return program, structure


def _bind_examples(signatures, examples) -> dict[str, int]:
    from ..errors import ShapeError

    if len(examples) != len(signatures):
        raise ShapeError(
            f"expected {len(signatures)} example inputs ({[s.name for s in signatures]}), got {len(examples)}"
        )
    bindings: dict[str, int] = {}
    for sig, array in zip(signatures, examples, strict=True):
        shape = np.shape(array)
        if len(shape) != len(sig.shape):
            raise ShapeError(f"input {sig.name!r}: expected rank {len(sig.shape)} {list(sig.shape)}, got {list(shape)}")
        for d, n in zip(sig.shape, shape, strict=True):
            if isinstance(d, str):
                if bindings.setdefault(d, n) != n:
                    raise ShapeError(f"input {sig.name!r}: symbol {d} is {bindings[d]} elsewhere but {n} here")
            elif d != n:
                raise ShapeError(f"input {sig.name!r}: expected shape {list(sig.shape)}, got {list(shape)}")
    return bindings
