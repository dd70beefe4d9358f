"""Building a Program from ONNX nodes: known (constant-folded) values, weights, and recorded ops.

Every ONNX tensor name maps to either an IR ``Value`` or a *known* array. Initializers,
``Constant`` nodes and anything computed only from known arrays are known: an op whose inputs are
all known runs at import time through the op's own ``forward`` (so folding and running agree).
A known array is put into the program only when an op that does run needs it: as a weight
(``param``) when it is larger than the tracer's inline limit, else as a ``constant``.

Shape arithmetic (``Shape -> Slice -> Concat -> Reshape``, as exporters emit for flatten and
attention) is folded too, over *object* arrays whose entries are ints or symbolic dims such as
``'N'``: the reshape target it produces is turned back into Paddle's shape-generic form (0 = keep
this dim, -1 = the rest), so the program stays valid for every input size.
"""

from __future__ import annotations

import re

import numpy as np

from ..core import symbolic
from ..core.op import REGISTRY, Context
from ..errors import ConversionError
from ..static.ir import Operation, Program, Value
from ..static.trace import CONSTANT_INLINE_LIMIT, _normalize_attr
from ..static.verifier import infer_outputs

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")


def clean_name(name: str) -> str:
    """An ONNX tensor name as an IR value name (letters, digits, '_' and '.')."""
    return _UNSAFE.sub("_", name) or "v"


class DataDependentError(ConversionError):
    """A node needs ``name`` as a constant (a Reshape target, TopK's k...) but it depends on data;
    ``backend`` binds such graph inputs per call instead."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def is_symbolic(array) -> bool:
    return isinstance(array, np.ndarray) and array.dtype == object


class Builder:
    """Holds the program under construction and the ONNX-name -> Value | known array table."""

    def __init__(self) -> None:
        self.program = Program()
        self.env: dict[str, Value | np.ndarray] = {}
        self._materialized: dict[str, Value] = {}
        self.node = None  # the ONNX node being converted, for error messages and locations

    # ----- reading ---------------------------------------------------------------------------------
    def get(self, name: str) -> Value | np.ndarray | None:
        """The Value or known array of an ONNX input name ('' = an omitted optional input)."""
        if not name:
            return None
        if name not in self.env:
            raise ConversionError(f"{self.where()}: input {name!r} is not defined by any earlier node or initializer")
        return self.env[name]

    def known(self, name: str) -> np.ndarray | None:
        item = self.get(name)
        return item if isinstance(item, np.ndarray) else None

    def require_known(self, name: str, what: str) -> np.ndarray:
        array = self.known(name)
        if array is None:
            raise DataDependentError(
                f"{self.where()}: {what} ({name!r}) must be a constant or computed from shapes only; it depends on "
                "the input data here, which paddlectl's static graph cannot express",
                name,
            )
        return array

    def where(self) -> str:
        node = self.node
        if node is None:
            return "onnx import"
        return f"node {node.name or '<unnamed>'!r} ({node.op_type})"

    # ----- writing ---------------------------------------------------------------------------------
    def set(self, name: str, item) -> None:
        """Bind ``name``; a name bound again (a Loop or Scan body's, per iteration) drops the Value
        its earlier known array was materialized as."""
        self.env[name] = item
        self._materialized.pop(name, None)

    def source(self, op_name: str, attrs: dict, shape, dtype, name: str | None = None) -> Value:
        value = self.program.new_value(shape, dtype, name)
        self.program.block.append(Operation(op_name, [], [value], attrs))
        return value

    def value(self, item, name: str | None = None) -> Value | None:
        """A Value for ``item``: Values pass through, known arrays are materialized once per name."""
        if item is None or isinstance(item, Value):
            return item
        if isinstance(item, str):
            return self.value(self.get(item), item)
        array = np.asarray(item)
        if is_symbolic(array):
            raise ConversionError(
                f"{self.where()}: a shape computed from symbolic input sizes {array.tolist()} is used as data; "
                "give those dims fixed sizes (specialize the model) or remove the shape arithmetic"
            )
        if name is not None and name in self._materialized:
            return self._materialized[name]
        if array.size > CONSTANT_INLINE_LIMIT:
            key = clean_name(name or "const")
            value = self.program.new_value(array.shape, array.dtype, key)
            array = np.ascontiguousarray(array)
            array.flags.writeable = False
            self.program.weights[value.name] = array
            self.program.block.append(Operation("param", [], [value], {"name": value.name}))
        else:
            value = self.source("constant", {"value": np.array(array)}, array.shape, array.dtype,
                                clean_name(name) if name else None)  # fmt: skip
        if name is not None:
            self._materialized[name] = value
        return value

    def op(self, op_name: str, inputs: list, n_outputs: int | None = None, **attrs) -> list:
        """Record ``op_name`` over ``inputs`` (names, Values, arrays or None), or fold it when every
        input is a known numeric array; returns the outputs (Values or arrays)."""
        items = [self.get(i) if isinstance(i, str) else i for i in inputs]
        attrs = {k: _normalize_attr(v) for k, v in attrs.items()}  # the same plain values tracing records
        opdef = REGISTRY[op_name]
        if all(i is None or (isinstance(i, np.ndarray) and not is_symbolic(i)) for i in items) and any(
            i is not None for i in items
        ):
            ctx = Context((False,) * len(items), attrs)
            try:
                out = opdef.forward(ctx, *items, **attrs)
            except Exception as exc:  # noqa: BLE001 - folding constants runs the op: report against the node
                raise ConversionError(
                    f"{self.where()}: {op_name} cannot take these constant inputs "
                    f"{[None if i is None else f'{i.dtype}{list(i.shape)}' for i in items]}: {exc}"
                ) from None
            outs = list(out) if isinstance(out, tuple) else [out]
            return [np.asarray(o) for o in outs]
        values = [self.value(i, inputs[k] if isinstance(inputs[k], str) else None) for k, i in enumerate(items)]
        try:
            specs = infer_outputs(op_name, values, attrs)
        except Exception as exc:  # noqa: BLE001 - any shape-rule failure is reported against the node
            raise ConversionError(f"{self.where()}: {op_name} cannot take these inputs: {exc}") from None
        outs = [self.program.new_value(s.shape, s.dtype) for s in specs]
        loc = f"onnx:{self.node.name}" if self.node is not None and self.node.name else None
        self.program.block.append(Operation(op_name, values, outs, attrs, loc=loc))
        return outs[:n_outputs] if n_outputs is not None else outs


def reshape_target(in_shape: tuple, target: np.ndarray, where: str) -> tuple:
    """An ONNX Reshape target (ints, possibly symbolic dims) as Paddle's shape-generic target.

    A symbolic entry equal to the input's dim at the same position becomes 0 (copy); one other
    symbolic entry becomes -1 (inferred). More than one unresolvable entry cannot be expressed."""
    out = []
    for i, d in enumerate(target.tolist()):
        if isinstance(d, str):
            same = i < len(in_shape) and symbolic.simplify(in_shape[i]) == symbolic.simplify(d)
            out.append(0 if same else -1)
        else:
            out.append(int(d))
    if out.count(-1) > 1:
        raise ConversionError(
            f"{where}: the reshape target {target.tolist()} for an input of shape {list(in_shape)} has more than one "
            "size that is neither fixed nor copied from the same position; fix the input sizes to import it"
        )
    return tuple(out)
