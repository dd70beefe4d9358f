"""A fused group's body evaluated by NumPy: the reference a ``fused_elementwise`` op (and an
elementwise op's generated kernel) runs while its kernel compiles in the background.

The body is the checked SSA text of ``codegen`` (``t0 = x0 + x1; t1 = max(t0, T(0.0))``), so each
statement is an expression over a small grammar; here every node becomes its NumPy counterpart on
whole arrays: ``max``/``min`` keep Python's rule (the first operand unless the second is larger /
smaller, so a NaN first operand stays), ``a if c else b`` becomes ``np.where``, ``math.f`` the ufunc.
Results equal the kernel's to float rounding; a body this cannot express (a float64 ``erf``, a
reduction without a NumPy twin) raises ``NoReference`` and the caller compiles instead.
"""

from __future__ import annotations

import ast
import functools

import numpy as np

from .background import NoReference
from .codegen import check_body, split_body
from .fastmath import erf_array

_UFUNCS = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
}  # fmt: skip
_REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}
"""The reduce ops whose accumulator rule NumPy has as one call (sum and mean accumulate in float64,
as the kernels' ``0.0`` accumulator does)."""


def _pick(keep_second):
    def pick(first, *others):
        result = first
        for other in others:
            result = np.where(keep_second(other, result), other, result)
        return result

    return pick


class _Math:
    """``math.<f>`` for arrays."""

    inf = np.inf

    def __init__(self, dtype) -> None:
        self._dtype = dtype

    def __getattr__(self, name):
        if name == "erf":
            if self._dtype != np.float32:
                raise NoReference("float64 erf has no NumPy twin here")
            return lambda x: erf_array(np.asarray(x, np.float32))
        return _UFUNCS[name]


class _Rewrite(ast.NodeTransformer):
    """``a if c else b`` -> ``_where(c, a, b)``; a chained comparison -> ``&`` of its links."""

    def visit_IfExp(self, node):
        self.generic_visit(node)
        call = ast.Call(ast.Name("_where", ast.Load()), [node.test, node.body, node.orelse], [])
        return ast.copy_location(call, node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        operands = [node.left, *node.comparators]
        links = [ast.Compare(a, [op], [b]) for a, op, b in zip(operands, node.ops, operands[1:], strict=False)]
        joined = links[0]
        for link in links[1:]:
            joined = ast.BinOp(joined, ast.BitAnd(), link)
        return ast.copy_location(joined, node)


@functools.lru_cache(maxsize=1024)
def _compiled(body: str, n_inputs: int):
    """Each statement as (target, Python code object over NumPy names); the body is checked first."""
    result = check_body(body, n_inputs)
    statements = []
    for statement in split_body(body):
        assign = ast.parse(statement).body[0]
        expression = ast.fix_missing_locations(ast.Expression(_Rewrite().visit(assign.value)))
        statements.append((assign.targets[0].id, compile(expression, "<fused body>", "eval")))
    return result, statements


def evaluate(body: str, arrays, dtype, reduce=None, axis=None, keepdim=False) -> np.ndarray:
    """What the generated kernel computes for ``body`` over ``arrays`` (broadcast together), in the
    computing float ``dtype``, then the trailing reduction ``reduce`` over ``axis`` if given."""
    dtype = np.dtype(dtype)
    if reduce is not None and reduce not in _REDUCTIONS:
        raise NoReference(f"reduce={reduce!r} has no NumPy twin here")
    result, statements = _compiled(body, len(arrays))
    cast = dtype.type
    names = {
        "T": lambda v: v.astype(dtype) if isinstance(v, np.ndarray) else cast(v),
        "max": _pick(np.greater), "min": _pick(np.less), "abs": np.abs, "math": _Math(dtype),
        "_where": np.where, "__builtins__": {},
    }  # fmt: skip
    names.update((f"x{i}", a) for i, a in enumerate(arrays))
    with np.errstate(all="ignore"):
        for target, code in statements:
            names[target] = eval(code, names)  # noqa: S307 - checked arithmetic over our own names
    full = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    out = np.broadcast_to(np.asarray(names[result]), full).astype(dtype)
    if reduce is None:
        return out
    axes = tuple(range(out.ndim)) if axis is None else tuple(np.atleast_1d(axis).tolist())
    wide = {"dtype": np.float64} if reduce in ("sum", "mean") else {}
    return np.asarray(_REDUCTIONS[reduce](out, axis=axes, keepdims=keepdim, **wide)).astype(dtype)
