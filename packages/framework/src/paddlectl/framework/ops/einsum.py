"""``paddle.einsum``: NumPy's einsum forward; each operand's gradient is another einsum op that
contracts the output gradient with the other operands into that operand's subscripts, so every
order of derivative is an einsum."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.tensor import Tensor
from ..errors import ShapeError
from ._util import constant
from .elementwise import conj_if_complex
from .shape import reshape

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
    try:
        result = np.einsum(f"{','.join(terms)}->{out}", *xs, optimize=len(xs) > 2)
    except ValueError as exc:
        raise ShapeError(f"einsum {equation!r}: {exc}; operand shapes {[list(x.shape) for x in xs]}") from None
    return np.asarray(result, dtype=np.result_type(*xs))


def _einsum_vjp(ctx, g):
    xs = [ctx.input(i) for i in range(len(ctx.needs_input_grad))]
    terms, out = _parse(ctx.attrs["equation"], [x.shape for x in xs])
    sizes = {c: d for t, x in zip(terms, xs, strict=True) for c, d in zip(t, x.shape, strict=True)}
    grads = []
    for i, x in enumerate(xs):
        if not ctx.needs_input_grad[i]:
            grads.append(None)
            continue
        others = [t for j, t in enumerate(terms) if j != i]
        target = terms[i]
        # letters of x that appear nowhere else (summed out in forward) are broadcast back by ones
        unique_target = "".join(dict.fromkeys(target))
        avail = set(out).union(*others) if others else set(out)
        missing = [c for c in unique_target if c not in avail]
        operands = [g, *(conj_if_complex(a) for j, a in enumerate(xs) if j != i)]  # Paddle's complex convention
        operands += [constant(np.ones(sizes[c], dtype=g.dtype)) for c in missing]
        subs = [out, *others, *missing]
        grad = einsum_op(*operands, equation=f"{','.join(subs)}->{unique_target}")
        if unique_target != target:
            grad = _onto_diagonal(grad, target, x.shape)
        grads.append(grad)
    return tuple(grads)


def _onto_diagonal(compact, target: str, shape) -> Tensor:
    """A gradient over x's distinct letters placed on the diagonal a repeated letter (``'ii'``) reads:
    each letter's axis sits at its first position, size 1 at the repeats, times the diagonal mask."""
    first = [target.index(c) == k for k, c in enumerate(target)]
    spread = reshape(compact, [d if f else 1 for d, f in zip(shape, first, strict=True)])
    idx = np.indices(shape)
    on_diag = np.all([idx[k] == idx[target.index(c)] for k, c in enumerate(target)], axis=0)
    return spread * constant(on_diag, compact.dtype)


def _einsum_infer(*xs: Spec, equation) -> Spec:
    terms, out = _parse(equation, [x.shape for x in xs])
    sizes = {}
    for t, x in zip(terms, xs, strict=True):
        for c, d in zip(t, x.shape, strict=True):
            if d != 1 or c not in sizes:
                sizes[c] = d
    return Spec(tuple(sizes[c] for c in out), np.result_type(*[x.dtype for x in xs]))


def _einsum_samples(rng):
    def sample(equation, *shapes):
        return Sample(tuple(rng.standard_normal(s) for s in shapes), {"equation": equation})

    return [
        sample("ij,jk->ik", (3, 4), (4, 2)),
        sample("bij,bjk", (2, 3, 4), (2, 4, 2)),
        sample("i,i->", (4,), (4,)),
        sample("ii->i", (3, 3)),
        sample("ij->", (3, 4)),
        sample("...ij,jk->...ik", (2, 3, 4), (4, 2)),
        sample("bi,oij,bj->bo", (2, 3), (4, 3, 2), (2, 2)),
    ]


einsum_op = OpDef("einsum", _einsum_forward, _einsum_vjp, _einsum_infer, OPAQUE, samples=_einsum_samples)


def einsum(equation, *operands):
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)``; '...' and implicit output allowed."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    return einsum_op(*operands, equation=str(equation))
