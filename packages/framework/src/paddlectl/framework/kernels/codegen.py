"""Source text of a generated elementwise kernel, and the check that keeps that text arithmetic only.

Every elementwise op's scalar expression lives in its record (``OpDef.expr``): a template over its
operands ``{x}`` (and ``{y}``, ``{z}``) in which ``T`` is the computing float type (``np.float32``
or ``np.float64``, so ``T(3.0)`` keeps float32 arithmetic in float32), or a function of the op's
attrs returning one (None: these attrs have no expression). The eager kernels of the activations
and the compiler's fused groups are both generated from it, so an op's arithmetic is written once.
NaN behaves as in NumPy: Python's ``max(a, b)`` returns ``a`` when either is NaN, so ``max({x},
...)`` keeps a NaN ``x``, and a binary max/min checks ``y`` explicitly.

A fused group's body is a few SSA statements (``t0 = x0 + x1; t1 = max(t0, T(0.0))``) over its
leaf inputs ``x0..xk``; the last statement is the result. :func:`kernel_source` wraps the body in
a Numba kernel over flat arrays with per-input strides (in elements) so broadcasting costs nothing:

    kernel(out, shape, strides, x0, x1, ...)

``shape`` is the iteration space after dims are coalesced (at least two dims: rows of the outer
ones, the last is the inner loop). With a trailing reduction, each row reduces to one output
element. An in-place kernel (``inplace=k``) has no ``out``: it stores each result over the leaf
``k`` element it read, ``kernel(shape, strides, x0, ...)``. Both choices keep LLVM vectorising the
inner loop (4-8x faster at 16K elements): an ``out`` that is the same memory as a leaf fails the
vectoriser's runtime overlap check, and a store to the address just loaded has none. Indices are
cast to ``uint64``: a signed index makes Numba emit a negative-index wraparound per load, which
blocks vectorising too. For the same reason each leaf's stride along the inner loop is fixed in the
source (``inner``: contiguous, broadcast or any; a kernel per pattern). Each module holds the
kernel twice, ``kernel`` (serial, compiled when loaded) and ``kernel_parallel`` (rows split over
Numba's threads): a ``parallel=True`` kernel takes about five times longer to compile, so it is
compiled only on first use for a large array.

The body comes from a model file's attrs, so before it becomes source it is parsed and every
node checked against a small arithmetic grammar (:func:`check_body`): names are leaves, earlier
temporaries, ``T``, ``max``/``min``/``abs`` and ``math.<function>``; nothing else can appear.
"""

from __future__ import annotations

import ast
import functools
import re

import numpy as np

from ..core.op import REDUCE, REGISTRY

_MATH = frozenset(
    {"exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "tanh", "erf", "sin", "cos", "tan", "asin", "acos",
     "atan", "sinh", "cosh", "inf"}
)  # fmt: skip
_CALLS = frozenset({"max", "min", "abs", "T"})
_LEAF = re.compile(r"^x\d+$")
_TEMP = re.compile(r"^t\d+$")
_NODES = (
    ast.Module, ast.Assign, ast.Expr, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Compare, ast.Call, ast.Name,
    ast.Attribute, ast.Constant, ast.Load, ast.Store, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub,
    ast.UAdd, ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq,
)  # fmt: skip


def accumulator(reduce) -> tuple | None:
    """The accumulator rule ``(initial, combine, finish)`` of the reduce op named ``reduce`` (its
    record's ``expr``), or None when there is no such op or it has none (a model file may name any)."""
    record = REGISTRY.get(reduce) if isinstance(reduce, str) else None
    if record is None or record.kind != REDUCE or not isinstance(record.expr, tuple):
        return None
    return record.expr


def lit(value) -> str:
    """A float literal in the computing type, for expressions built from attrs."""
    return f"T({float(value)!r})"


def template(expr, attrs: dict) -> str | None:
    """An op's ``expr`` (a template, or a function of attrs giving one) for these attrs; None if it has none."""
    return expr(attrs) if callable(expr) else expr


def expression(text: str, operands) -> str:
    """A template applied to operand expressions (names such as ``x0``, ``t3``; others parenthesised)."""
    names = dict(zip(("x", "y", "z"), (o if o.isidentifier() else f"({o})" for o in operands), strict=False))
    return text.format(**names)


class KernelSourceError(ValueError):
    """A fused op's body is not plain arithmetic over its inputs (a damaged or hostile model file)."""


def split_body(body: str) -> list[str]:
    return [s.strip() for s in body.split(";") if s.strip()]


@functools.lru_cache(maxsize=4096)
def check_body(body: str, n_inputs: int) -> str:
    """Return the name of the result temporary; raise KernelSourceError on anything not allowed.
    Memoised: the verifier asks after every pass, and many groups share a body."""

    def bad(why: str) -> KernelSourceError:
        return KernelSourceError(
            f"fused_elementwise body {body!r}: {why}; a fused op's body may only assign t<k> = arithmetic over "
            f"x0..x{n_inputs - 1}, earlier t<k>, T(<number>), max/min/abs and math functions {sorted(_MATH)}. "
            "Export the model again, or load it with the fuse_elementwise pass written out"
        )

    statements = split_body(body)
    if not statements:
        raise bad("it is empty")
    defined: set[str] = set()
    target = None
    for statement in statements:
        try:
            tree = ast.parse(statement)
        except SyntaxError:
            raise bad(f"statement {statement!r} is not valid") from None
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign) or len(tree.body[0].targets) != 1:
            raise bad(f"statement {statement!r} is not one assignment")
        assign = tree.body[0]
        for node in ast.walk(assign.value):
            if not isinstance(node, _NODES):
                raise bad(f"{type(node).__name__} is not allowed")
            if isinstance(node, ast.Constant) and (
                isinstance(node.value, bool) or not isinstance(node.value, int | float)
            ):
                raise bad(f"constant {node.value!r} is not a number")
            if isinstance(node, ast.Call):
                f = node.func
                ok = (isinstance(f, ast.Name) and f.id in _CALLS) or (
                    isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math"
                )
                if not ok or node.keywords:
                    raise bad("only T, max, min, abs and math.<function> may be called")
            if isinstance(node, ast.Attribute):
                if not (isinstance(node.value, ast.Name) and node.value.id == "math" and node.attr in _MATH):
                    raise bad(f"attribute {ast.unparse(node)} is not an allowed math function")
            if isinstance(node, ast.Name):
                name = node.id
                leaf = _LEAF.match(name) and int(name[1:]) < n_inputs
                if not (leaf or name in defined or name in _CALLS or name == "math"):
                    raise bad(f"name {name!r} is not an input, an earlier temporary or an allowed function")
        t = assign.targets[0]
        if not isinstance(t, ast.Name) or not _TEMP.match(t.id) or t.id in defined:
            raise bad(f"each statement must assign a new t<k>, got {ast.unparse(t)!r}")
        defined.add(t.id)
        target = t.id
    return target


INNER_KINDS = {"c": "contiguous (stride 1)", "b": "broadcast (stride 0)", "s": "any stride"}
"""A leaf's stride along the inner loop, fixed in the source: LLVM vectorises a unit-stride load and
hoists a broadcast one, while a stride read at run time leaves it a scalar loop (8x slower on a
hardswish whose constants are inputs)."""

_VECTOR_MATH = re.compile(r"\bmath\.(exp|tanh|erf)\(")
"""Calls the generated source takes from ``kernels.fastmath``: float32 versions LLVM vectorises."""

_MATH_CALL = re.compile(r"\bmath\.(\w+)\(")
_VECTORISED = {np.dtype(np.float32): {"sqrt", "exp", "tanh", "erf"}, np.dtype(np.float64): {"sqrt"}}
"""Math functions a loop computes without a libm call per element (``fastmath``'s float32 exp/tanh/erf,
an instruction for sqrt)."""


def libm_bound(body: str, dtype) -> bool:
    """Whether the body calls libm per element (erf, log1p, float64 exp...). Such a loop does not
    vectorise and is compute-bound (float64 erf: ~15 ns an element): it goes parallel from
    ``PARALLEL_MIN_SIZE`` elements as the other kernels do, not only from
    ``ELEMENTWISE_PARALLEL_MIN_SIZE``, and keeps libm's exp/tanh, which are faster than
    ``fastmath``'s as scalars (gelu's gradient on 1M float32: 15.1 against 17.5 ms)."""
    return bool(set(_MATH_CALL.findall(body)) - _VECTORISED.get(np.dtype(dtype), set()))


_INNER_INDEX = {"c": "np.uint64(o{i} + j)", "s": "np.uint64(o{i} + j * s{i})"}


def _row_setup(i: int, kind: str) -> str:
    """Per-row work for a leaf that is not contiguous: its stride, or its one broadcast value."""
    if kind == "b":
        return f"        x{i} = a{i}[np.uint64(o{i})]"
    return f"        s{i} = strides[{i}, nd - 1]"


def _variants(function: str) -> str:
    """The kernel twice: ``kernel`` (serial) and ``kernel_parallel`` (rows split over threads), as two
    functions so Numba's disk cache keeps each under its own name. NumPy's error model: a division
    by zero gives inf/nan as the eager ops do, and without Python's zero check the loop vectorises
    (a sigmoid 22x faster)."""
    text = function.replace("\n\n        for j", "\n        for j").rstrip()
    serial = '@njit(cache=True, nogil=True, error_model="numpy")\n' + text.replace("{name}", "kernel").replace(
        "{loop}", "range"
    )
    parallel = '@njit(cache=True, nogil=True, parallel=True, error_model="numpy")\n' + text.replace(
        "{name}", "kernel_parallel"
    ).replace("{loop}", "prange")
    return f"{serial}\n\n\n{parallel}\n"


def kernel_source(
    body: str,
    input_dtypes: list,
    out_dtype,
    reduce: str | None = None,
    inplace: int | None = None,
    inner: str | None = None,
) -> str:
    """The module text of a ``kernel(out, shape, strides, x0, ...)`` for a checked body, or of
    ``kernel(shape, strides, x0, ...)`` writing over leaf ``inplace`` (no reduction then).
    ``inner`` has one letter per leaf for its stride along the inner loop (see ``INNER_KINDS``);
    None means any stride for every leaf."""
    n = len(input_dtypes)
    result = check_body(body, n)
    inner = inner or "s" * n
    if len(inner) != n or set(inner) - set(INNER_KINDS):
        raise ValueError(f"kernel_source: inner={inner!r} needs one of {sorted(INNER_KINDS)} per leaf ({n})")
    if inplace is not None and (reduce is not None or not 0 <= inplace < n or inner[inplace] == "b"):
        raise ValueError(f"kernel_source: inplace={inplace!r} needs an elementwise group with that leaf")
    work = np.dtype(out_dtype).name
    leaves = ", ".join(f"a{i}" for i in range(n))
    params = f"shape, strides, {leaves}" if inplace is not None else f"out, shape, strides, {leaves}"
    offsets = "\n".join(f"        o{i} = 0" for i in range(n))
    steps = "\n".join(f"            o{i} += i * strides[{i}, d]" for i in range(n))
    row = "\n".join(_row_setup(i, kind) for i, kind in enumerate(inner) if kind != "c")
    loads = "\n".join(
        f"            x{i} = a{i}[{_INNER_INDEX[kind].format(i=i)}]" for i, kind in enumerate(inner) if kind != "b"
    )
    vector = not libm_bound(body, out_dtype)
    stmts = "\n".join(
        "            " + (_VECTOR_MATH.sub(r"fastmath.\1(", s) if vector else s) for s in split_body(body)
    )
    if inplace is not None:
        k = inplace
        head, store, tail = "", f"            a{k}[{_INNER_INDEX[inner[k]].format(i=k)}] = {result}", ""
    elif reduce is None:
        head, store, tail = "", f"            out[np.uint64(r * inner + j)] = {result}", ""
    else:
        init, combine, finish = accumulator(reduce)
        head = f"        acc = {init}"
        store = f"            acc = {combine.format(acc='acc', v=result)}"
        tail = f"        out[r] = {finish.format(acc='acc', n='inner')}"
    doc = "; ".join(split_body(body)) + (f"; then {reduce} over each row" if reduce else "")
    doc += f"; written over x{inplace}" if inplace is not None else ""
    function = f"""def {{name}}({params}):
    nd = shape.shape[0]
    inner = shape[nd - 1]
    rows = 1
    for d in range(nd - 1):
        rows *= shape[d]
    for r in {{loop}}(rows):
        rest = r + 0  # a copy the loop may change (parfors refuse writes to the prange index)
{offsets}
        for d in range(nd - 2, -1, -1):
            i = rest % shape[d]
            rest = rest // shape[d]
{steps}
{row}
{head}
        for j in range(inner):
{loads}
{stmts}
{store}
{tail}
"""
    return f'''"""Generated by paddlectl.framework.kernels.codegen; do not edit.

{doc}
inputs: {", ".join(np.dtype(d).name for d in input_dtypes)} -> {work}; inner strides: {inner}
"""

import math

import numpy as np
from numba import njit, prange

from paddlectl.framework.kernels import fastmath

T = np.{work}


{_variants(function)}'''
