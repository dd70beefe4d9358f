"""Symbolic dims: canonical text for expressions over symbol names, exact division, evaluation.

A traced shape holds ints and strings such as ``'N'`` or ``'(H-1)//2+1'``. Shape rules build those
strings freely; :func:`simplify` rewrites each into one canonical form so that two rules reaching
the same size (a strided conv and a 1x1 strided shortcut) produce equal strings and broadcast
together. The algebra is a polynomial with integer coefficients over atoms, where an atom is a
symbol name or a floor division that does not divide exactly; that covers every rule we have
(sums, products by constants, window sizes, reshape's -1). :func:`evaluate` gives a dim's value
once the symbols are bound to the sizes of a concrete input, without ever calling ``eval``.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import re

from ..errors import ShapeError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# A polynomial: {monomial: coefficient}, a monomial is a sorted tuple of atom strings ('' free).
Poly = dict


def is_symbol(dim) -> bool:
    """True for a symbolic dim (any string); ints are static."""
    return isinstance(dim, str)


def _const(c: int) -> Poly:
    return {(): c} if c else {}


def _add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
        if out[m] == 0:
            del out[m]
    return out


def _mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
            if out[m] == 0:
                del out[m]
    return out


def _floordiv(a: Poly, k: int) -> Poly:
    if k <= 0:
        raise ShapeError(f"symbolic dim: division by {k} (only positive constant divisors are allowed)")
    if all(c % k == 0 for c in a.values()):
        return {m: c // k for m, c in a.items()}
    if all(not m for m in a):
        return _const(a.get((), 0) // k)
    if all(c % k == 0 for m, c in a.items() if m):
        # (k*P + c)//k == P + c//k for an integer P: '(32*H-1)//2' is '16*H-1'
        return {**{m: c // k for m, c in a.items() if m}, **_const(a.get((), 0) // k)}
    return {(f"({_text(a)})//{k}",): 1}


def _parse(node) -> Poly:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return _const(node.value)
    if isinstance(node, ast.Name):
        return {(node.id,): 1}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return {m: -c for m, c in _parse(node.operand).items()}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _parse(node.operand)
    if isinstance(node, ast.BinOp):
        left = _parse(node.left)
        right = _parse(node.right)
        if isinstance(node.op, ast.Add):
            return _add(left, right)
        if isinstance(node.op, ast.Sub):
            return _add(left, right, -1)
        if isinstance(node.op, ast.Mult):
            return _mul(left, right)
        if isinstance(node.op, ast.FloorDiv):
            if set(right) - {()}:
                raise ShapeError("symbolic dim: only division by a constant is supported")
            return _floordiv(left, right.get((), 0))
    raise ShapeError(f"symbolic dim: unsupported expression {ast.unparse(node)!r} (use + - * // and ints)")


def _monomial_text(m: tuple, c: int) -> str:
    # a floor-division atom inside a product or after a minus needs parentheses: '2*(H-1)//2' reads
    # as (2*(H-1))//2 and '-(H-1)//2' as (-(H-1))//2
    atoms = list(m) if c == 1 and len(m) == 1 else [f"({a})" if "//" in a else a for a in m]
    if c == 1 and atoms:
        return "*".join(atoms)
    if c == -1 and atoms:
        return "-" + "*".join(atoms)
    return "*".join([str(c), *atoms])


def _text(p: Poly) -> str:
    if not p:
        return "0"
    # symbolic terms first (by atoms), then the constant: 'N*16+3', '(H-1)//2+1'
    terms = sorted(p.items(), key=lambda mc: (not mc[0], mc[0]))
    out = ""
    for m, c in terms:
        piece = _monomial_text(m, c)
        if out and not piece.startswith("-"):
            out += "+"
        out += piece
    return out


def to_poly(dim) -> Poly:
    """A dim (int or expression string) as a polynomial (a fresh dict: callers may change it)."""
    if isinstance(dim, int):
        return _const(int(dim))
    return dict(_parsed(str(dim)))


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> tuple:
    """The polynomial of an expression, as (monomial, coefficient) pairs; cached because a model's
    shape rules see the same few dims thousands of times (15,000 parses loading PP-OCRv4 det)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ShapeError(f"symbolic dim {text!r} is not an expression over symbol names and ints") from None
    return tuple(_parse(tree).items())


def from_poly(p: Poly):
    """Back to a dim: an int when the polynomial is constant, else its canonical text."""
    if all(not m for m in p):
        return p.get((), 0)
    return _text(p)


def simplify(dim):
    """The canonical form of a dim: ints stay, equal expressions get equal text."""
    if isinstance(dim, int):
        return dim
    return _simplified(str(dim))


@functools.lru_cache(maxsize=4096)
def _simplified(text: str):
    return from_poly(dict(_parsed(text)))


def add(*dims):
    out: Poly = {}
    for d in dims:
        out = _add(out, to_poly(d))
    return from_poly(out)


def mul(*dims):
    out: Poly = {(): 1}
    for d in dims:
        out = _mul(out, to_poly(d))
    return from_poly(out)


def divide_exact(total, known):
    """``total / known`` when it divides exactly as polynomials (reshape's -1); None otherwise."""
    t, k = to_poly(total), to_poly(known)
    if len(k) != 1:
        return None
    ((km, kc),) = k.items()
    if kc == 0:
        return None
    out: Poly = {}
    for m, c in t.items():
        rest = list(m)
        for atom in km:
            if atom not in rest:
                return None
            rest.remove(atom)
        if c % kc:
            return None
        out[tuple(rest)] = c // kc
    return from_poly(out)


def symbols(dim) -> set[str]:
    """The symbol names a dim mentions."""
    if isinstance(dim, int):
        return set()
    return {n.id for n in ast.walk(ast.parse(str(dim), mode="eval")) if isinstance(n, ast.Name)}


def evaluate(dim, bindings: dict[str, int]) -> int:
    """The value of a dim once its symbols are bound; ShapeError names an unbound symbol."""
    if isinstance(dim, int):
        return dim
    return _evaluator(str(dim))(bindings)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


@functools.lru_cache(maxsize=4096)
def _evaluator(text: str):
    """``value(bindings)`` for one dim's text, built from its syntax tree once: a predictor plans
    every new input shape by evaluating each value's dims (thousands a plan), and parsing each
    time was a third of a PP-OCR recogniser's planning."""

    def build(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            value = node.value
            return lambda bindings: value
        if isinstance(node, ast.Name):
            name = node.id

            def bound(bindings):
                if name not in bindings:
                    raise ShapeError(
                        f"symbolic dim {text!r}: symbol {name!r} is not bound by any input; "
                        f"known symbols: {sorted(bindings)}"
                    )
                return bindings[name]

            return bound
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            operand, sign = build(node.operand), -1 if isinstance(node.op, ast.USub) else 1
            return lambda bindings: sign * operand(bindings)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right, op = build(node.left), build(node.right), _BINARY[type(node.op)]
            return lambda bindings: op(left(bindings), right(bindings))
        raise ShapeError(f"symbolic dim {text!r}: unsupported expression")

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ShapeError(f"symbolic dim {text!r}: unsupported expression") from None
    return build(tree.body)


def check_name(name: str) -> str:
    """A symbol name given by a user (InputSpec): an identifier, so it prints and parses."""
    if not _NAME.match(name):
        raise ShapeError(f"symbolic dim name {name!r} must be an identifier such as 'N' or 'H'")
    return name


def product(dims) -> int | str:
    """Product of dims, symbolic when any is."""
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)
    return mul(*dims)
