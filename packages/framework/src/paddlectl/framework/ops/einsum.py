"""``paddle.einsum``: NumPy's einsum forward; each operand's gradient is another einsum that
contracts the output gradient with the other operands into that operand's subscripts."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Spec
from ..errors import ShapeError

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse(equation: str, shapes: list[tuple]) -> tuple[list[str], str]:
    """Explicit per-operand subscripts and output, with '...' spelled out as letters."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise ShapeError(f"einsum: equation {equation!r} names {len(inputs)} operands, got {len(shapes)}")
    used = set(eq) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    n_ell = max((len(s) - (len(t) - 3) for t, s in zip(inputs, shapes, strict=True) if "..." in t), default=0)
    ell = "".join(spare[:n_ell])
    terms = []
    for t, s in zip(inputs, shapes, strict=True):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k :] if k else "")
        if len(t) != len(s):
            raise ShapeError(f"einsum: subscripts {t!r} do not match an operand of rank {len(s)} in {equation!r}")
        terms.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {c: "".join(terms).count(c) for c in set("".join(terms))}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return terms, out


def _einsum_forward(ctx, *xs, equation):
    terms, out = _parse(equation, [x.shape for x in xs])
    ctx.save(xs, terms, out)
    try:
        result = np.einsum(f"{','.join(terms)}->{out}", *xs, optimize=len(xs) > 2)
    except ValueError as exc:
        raise ShapeError(f"einsum {equation!r}: {exc}; operand shapes {[list(x.shape) for x in xs]}") from None
    return np.asarray(result, dtype=np.result_type(*xs))


def _einsum_vjp(ctx, g):
    xs, terms, out = ctx.saved
    grads = []
    for i, x in enumerate(xs):
        if not ctx.needs_input_grad[i]:
            grads.append(None)
            continue
        others = [t for j, t in enumerate(terms) if j != i]
        target = terms[i]
        # letters of x that appear nowhere else (summed out in forward) are broadcast back; a repeated
        # letter in x (a diagonal) is rebuilt by multiplying with an identity.
        sizes = {c: d for t, a in zip(terms, xs, strict=True) for c, d in zip(t, a.shape, strict=True)}
        unique_target = "".join(dict.fromkeys(target))
        avail = set(out).union(*others) if others else set(out)
        missing = [c for c in unique_target if c not in avail]
        operands = [g] + [a for j, a in enumerate(xs) if j != i]
        subs = [out] + others
        for c in missing:
            operands.append(np.ones(sizes[c], dtype=g.dtype))
            subs.append(c)
        compact = np.einsum(f"{','.join(subs)}->{unique_target}", *operands, optimize=len(operands) > 2)
        if unique_target != target:
            full = np.zeros(x.shape, dtype=g.dtype)
            idx = np.indices(x.shape)
            pos = {c: target.index(c) for c in unique_target}
            on_diag = np.all([idx[k] == idx[pos[c]] for k, c in enumerate(target)], axis=0)
            full[on_diag] = compact[tuple(idx[pos[c]][on_diag] for c in unique_target)]
            compact = full
        grads.append(compact.astype(x.dtype, copy=False))
    return tuple(grads)


def _einsum_infer(*xs: Spec, equation) -> Spec:
    terms, out = _parse(equation, [x.shape for x in xs])
    sizes = {}
    for t, x in zip(terms, xs, strict=True):
        for c, d in zip(t, x.shape, strict=True):
            if d != 1 or c not in sizes:
                sizes[c] = d
    return Spec(tuple(sizes[c] for c in out), np.result_type(*[x.dtype for x in xs]))


einsum_op = OpDef("einsum", _einsum_forward, _einsum_vjp, _einsum_infer, OPAQUE)


def einsum(equation, *operands):
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)``; '...' and implicit output allowed."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    return einsum_op(*operands, equation=str(equation))
