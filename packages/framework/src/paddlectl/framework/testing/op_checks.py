"""The conformance checks every registered op must meet, as scikit-learn's estimator checks are for
estimators: registering an op is enough to have it checked, without writing a test.

``check_op(op)`` runs the checks on the calls the op's record lists (``samples``), or on the
default calls its kind and ``forward`` signature give (``default_samples``). A check the op cannot
meet is named in the record's ``exempt`` with the reason; ``skip_reason`` says why a check is not
run on an op, ``exemptions`` lists every exemption in the registry so reviewers see them.

- ``vjp``: the engine's gradient of ``<outputs, random cotangent>`` against central finite
  differences, float64. An input the vjp gives None is held constant, as not differentiable by
  design (running statistics, class weights, labels). Complex inputs and outputs are checked in
  Paddle's convention: the loss is ``Re(sum(conj(cotangent) * output))`` and a complex input's
  gradient is ``dL/dRe + i dL/dIm`` (each part perturbed on its own).
- ``vjp2``: the gradient taken with ``create_graph=True`` differentiated again
  (a Hessian-vector product) against finite differences of the first gradient along the vector.
- ``infer``: the shape rule on Specs against the shapes and dtypes ``forward`` produces.
- ``trace``: eager against the program ``jit.to_static`` makes (InputSpecs of the sample's shapes),
  traced on other values than it is executed on, and the gradient as well.
- ``compile`` (elementwise, broadcast and reduce ops): eager against the program after the
  ``fuse_elementwise`` pass, which must have fused the op into a generated kernel.
- ``onnx`` (ops with an export rule): a one-op program exported and run in onnxruntime, float32;
  a sample the rule refuses (ConversionError: that configuration has no ONNX form) is left out.
"""

from __future__ import annotations

import inspect
import zlib
from dataclasses import dataclass

import numpy as np

from ..core.autograd import enable_grad, grad, no_grad
from ..core.op import ELEMENTWISE, OPAQUE, REDUCE, REGISTRY, OpDef, Sample, Spec
from ..errors import ConfigError, ConversionError
from ..ops.creation import to_tensor
from ..static.executor import Executor
from ..static.input_spec import InputSpec, signatures
from ..static.passes import PassManager
from ..static.trace import trace

CHECKS = ("vjp", "vjp2", "infer", "trace", "compile", "onnx")
"""The checks by the names a record's ``exempt`` uses."""

_EPS = 1e-6  # central differences per element, float64
_EPS_DIRECTION = 1e-5  # central differences of the first gradient along one direction
_GRAD_TOL = {"rtol": 1e-4, "atol": 1e-5}
_EXEC_TOL = {"rtol": 1e-6, "atol": 1e-9}  # the same kernels, or a lowering of them
_ONNX_TOL = {"rtol": 1e-4, "atol": 1e-5}  # another runtime's kernels, in float32


# ----- which calls -------------------------------------------------------------------------------


def default_samples(op: OpDef, rng: np.random.Generator) -> list[Sample] | None:
    """The sweep's calls for an op without ``samples``: the positional parameters of ``forward``
    after ctx that have no default are the inputs, the defaults of the others are the attrs.
    ELEMENTWISE: every input a float64 (3, 4) array uniform in [0.5, 2.0]; BROADCAST: the first
    (3, 4), the others (4,); REDUCE: one (3, 4) input. None for OPAQUE ops (they declare samples)
    and for signatures the rule cannot fill (``*args``, keyword-only parameters without default)."""
    if op.kind == OPAQUE:
        return None
    try:
        params = list(inspect.signature(op.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    inputs, attrs = 0, {}
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL or (p.kind is p.KEYWORD_ONLY and p.default is p.empty):
            return None
        if p.default is p.empty:
            inputs += 1
        else:
            attrs[p.name] = p.default
    if inputs == 0 or (op.kind == REDUCE and inputs != 1):
        return None
    shapes = [(3, 4)] + [(3, 4) if op.kind == ELEMENTWISE else (4,)] * (inputs - 1)
    return [Sample(tuple(rng.uniform(0.5, 2.0, s) for s in shapes), attrs)]


def _samples(op: OpDef, rng: np.random.Generator) -> list[Sample]:
    listed = op.samples(rng) if op.samples is not None else default_samples(op, rng)
    if not listed:
        raise AssertionError(
            f"op {op.name}: nothing to check it on: it has no samples and its kind ({op.kind}) or forward signature "
            "gives no default; give it samples=... (a list of core.op.Sample), or exempt every check with a reason"
        )
    out = []
    for s in listed:
        if not isinstance(s, Sample):
            raise AssertionError(
                f"op {op.name}: samples(rng) must return core.op.Sample objects, got {type(s).__name__}"
            )
        out.append(Sample(tuple(None if a is None else np.asarray(a) for a in s.inputs), dict(s.attrs)))
    return out


# ----- which checks ------------------------------------------------------------------------------


def skip_reason(op: OpDef, check: str, exempt: bool = True) -> str | None:
    """Why ``check`` is not run on ``op`` (the record's exemption first, unless ``exempt`` is
    False), or None when it is."""
    if check not in CHECKS:
        raise ConfigError(f"unknown check {check!r}; choose from {list(CHECKS)}")
    if exempt and check in op.exempt:
        return op.exempt[check]
    if check in ("vjp", "vjp2") and op.vjp is None:
        return "no gradient: the record's vjp is None"
    if check == "compile" and op.kind == OPAQUE:
        return "kind opaque: the compiler does not fuse it"
    if check == "onnx" and op.onnx_export is None:
        return "no ONNX export rule"
    return None


def exemptions() -> list[tuple[str, str, str]]:
    """Every ``(op, check, reason)`` exemption in the registry, sorted."""
    return sorted((name, check, reason) for name, op in REGISTRY.items() for check, reason in op.exempt.items())


def check_op(op: OpDef | str, checks=CHECKS, seed: int | None = None, exempt: bool = True) -> dict[str, str]:
    """Run ``checks`` on ``op`` (a record or a registered name); raise AssertionError listing every
    check that failed, else return ``{check: reason}`` for those not run (exempt or not applicable).
    ``seed`` fixes the random samples and cotangents (default: one derived from the op's name);
    ``exempt=False`` runs the checks the record exempts too (one that passes is a stale exemption)."""
    if isinstance(op, str):
        if op not in REGISTRY:
            raise ConfigError(f"check_op: no op named {op!r} is registered; give an OpDef or one of REGISTRY's names")
        op = REGISTRY[op]
    if not isinstance(op, OpDef):
        raise ConfigError(f"check_op: give an OpDef or a registered op name, got {type(op).__name__}")
    checks = (checks,) if isinstance(checks, str) else tuple(checks)
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ConfigError(f"check_op: unknown check(s) {unknown}; choose from {list(CHECKS)}")
    rng = np.random.default_rng(zlib.crc32(op.name.encode()) if seed is None else seed)
    skipped, failures, samples = {}, [], None
    for check in checks:
        reason = skip_reason(op, check, exempt)
        if reason is None:
            try:
                samples = _samples(op, rng) if samples is None else samples
                reason = _RUN[check](op, samples, rng)
            except AssertionError as exc:
                failures.append(f"[{check}] {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - any error the op raises is that check's failure
                failures.append(f"[{check}] op {op.name} raised {type(exc).__name__}: {exc}")
                continue
        if reason is not None:
            skipped[check] = reason
    if failures:
        raise AssertionError("\n".join(failures))
    return skipped


# ----- running the op ----------------------------------------------------------------------------


def _as_tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def _tensors(arrays, wrt=()) -> list:
    return [None if a is None else to_tensor(a, stop_gradient=i not in wrt) for i, a in enumerate(arrays)]


def _run(op: OpDef, arrays, attrs) -> tuple:
    """The op's outputs on ``arrays`` as arrays, through dispatch, nothing recorded."""
    with no_grad():
        return tuple(t.numpy() for t in _as_tuple(op(*_tensors(arrays), **attrs)))


def _float64(arrays) -> list:
    wide = {"f": np.float64, "c": np.complex128}
    return [a.astype(wide[a.dtype.kind]) if a is not None and a.dtype.kind in wide else a for a in arrays]


def _floats(arrays) -> list[int]:
    """The slots holding float or complex arrays: the ones gradients flow through."""
    return [i for i, a in enumerate(arrays) if a is not None and a.dtype.kind in "fc"]


def _normal(rng, like: np.ndarray) -> np.ndarray:
    """A random array of ``like``'s shape, complex where ``like`` is."""
    out = rng.standard_normal(like.shape)
    return out + 1j * rng.standard_normal(like.shape) if like.dtype.kind == "c" else out


def _close(got, want, what: str, tol: dict) -> None:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        raise AssertionError(f"{what}: got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
    try:
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, equal_nan=True, **tol)
        else:
            np.testing.assert_array_equal(got, want)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {str(exc).strip()}") from None


def _same_outputs(got: list, want: tuple, what: str, tol: dict) -> None:
    if len(got) != len(want):
        raise AssertionError(f"{what}: {len(got)} outputs, eager gives {len(want)}")
    for j, (g, w) in enumerate(zip(got, want, strict=True)):
        _close(g, w, f"{what}, output {j}", tol)


# ----- gradients ---------------------------------------------------------------------------------


def _gradients(op, arrays, attrs, wrt, scored, cotangents, create_graph=False):
    """(input tensors, gradients of ``<outputs[scored], cotangents>`` w.r.t. inputs ``wrt``, None if unused)."""
    with enable_grad():
        tensors = _tensors(arrays, wrt)
        outs = _as_tuple(op(*tensors, **attrs))
        live = [(outs[j], to_tensor(c)) for j, c in zip(scored, cotangents, strict=True) if not outs[j].stop_gradient]
        if not live:
            raise AssertionError(f"op {op.name}: its float outputs carry no gradient although the record has a vjp")
        grads = grad(
            [o for o, _ in live],
            [tensors[i] for i in wrt],
            grad_outputs=[c for _, c in live],
            create_graph=create_graph,
            allow_unused=True,
        )
    return tensors, grads


def _values(grads, arrays, wrt) -> list[np.ndarray]:
    return [np.zeros_like(arrays[i]) if g is None else g.numpy() for g, i in zip(grads, wrt, strict=True)]


@dataclass
class _Differentiable:
    """A sample as the gradient checks see it: float64 inputs, the input slots differentiated
    (``wrt``), the float output slots (``scored``), a cotangent for each and the engine's gradients."""

    k: int
    attrs: dict
    arrays: list
    wrt: list
    scored: list
    cotangents: list
    grads: list


def _differentiable(op, samples, rng) -> list[_Differentiable]:
    """The samples with a float input and a float output. An input the vjp gives None is held
    constant, as not differentiable by design (running statistics, class weights)."""
    found = []
    for k, s in enumerate(samples):
        arrays = _float64(s.inputs)
        wrt, outs = _floats(arrays), _run(op, arrays, s.attrs)
        scored = _floats(outs)
        if not wrt or not scored:
            continue
        cotangents = [_normal(rng, outs[j]) for j in scored]
        grads = _gradients(op, arrays, s.attrs, wrt, scored, cotangents)[1]
        kept = [(i, g) for i, g in zip(wrt, grads, strict=True) if g is not None]
        if not kept:
            raise AssertionError(
                f"op {op.name}: its vjp gives none of the float inputs {wrt} a gradient; set vjp=None if it has none"
            )
        found.append(
            _Differentiable(k, s.attrs, arrays, [i for i, _ in kept], scored, cotangents, [g for _, g in kept])
        )
    return found


def _check_vjp(op, samples, rng):
    found = _differentiable(op, samples, rng)
    for d in found:

        def objective(xs, d=d):
            outs = _run(op, xs, d.attrs)
            return sum(float(np.sum(np.conj(c) * outs[j]).real) for j, c in zip(d.scored, d.cotangents, strict=True))

        for i, got in zip(d.wrt, _values(d.grads, d.arrays, d.wrt), strict=True):
            want = np.zeros_like(d.arrays[i])
            for e in range(d.arrays[i].size):
                for step in (1.0, 1j) if want.dtype.kind == "c" else (1.0,):
                    plus, minus = list(d.arrays), list(d.arrays)
                    plus[i], minus[i] = d.arrays[i].copy(), d.arrays[i].copy()
                    plus[i].reshape(-1)[e] += step * _EPS
                    minus[i].reshape(-1)[e] -= step * _EPS
                    want.reshape(-1)[e] += step * (objective(plus) - objective(minus)) / (2 * _EPS)
            what = f"op {op.name}: gradient of input {i} vs central finite differences (sample {d.k})"
            _close(got, want, what, _GRAD_TOL)
    return None if found else _NOTHING_TO_DIFFERENTIATE


def _check_vjp2(op, samples, rng):
    found = _differentiable(op, samples, rng)
    for d in found:
        directions = [_normal(rng, d.arrays[i]) for i in d.wrt]
        tensors, first = _gradients(op, d.arrays, d.attrs, d.wrt, d.scored, d.cotangents, create_graph=True)
        connected = [
            (g, to_tensor(v)) for g, v in zip(first, directions, strict=True) if g is not None and not g.stop_gradient
        ]
        hvp = [None] * len(d.wrt)
        if connected:
            with enable_grad():
                hvp = grad(
                    [g for g, _ in connected], [tensors[i] for i in d.wrt], [v for _, v in connected], allow_unused=True
                )

        def first_gradient(sign, d=d, directions=directions):
            moved = list(d.arrays)
            for i, v in zip(d.wrt, directions, strict=True):
                moved[i] = d.arrays[i] + sign * _EPS_DIRECTION * v
            return _values(_gradients(op, moved, d.attrs, d.wrt, d.scored, d.cotangents)[1], moved, d.wrt)

        plus, minus = first_gradient(1.0), first_gradient(-1.0)
        for i, got, p, m in zip(d.wrt, _values(hvp, d.arrays, d.wrt), plus, minus, strict=True):
            what = f"op {op.name}: Hessian-vector product for input {i} vs finite differences of the first gradient (sample {d.k})"
            _close(got, (p - m) / (2 * _EPS_DIRECTION), what, _GRAD_TOL)
    return None if found else _NOTHING_TO_DIFFERENTIATE


_NOTHING_TO_DIFFERENTIATE = "no sample has a float input and a float output"


# ----- shape rule, tracing, fusion, ONNX ---------------------------------------------------------


def _check_infer(op, samples, rng):
    """On concrete Specs a symbolic output dim can only be a size the values decide (``nonzero``):
    it matches any size."""
    for k, s in enumerate(samples):
        outs = _run(op, s.inputs, s.attrs)
        specs = [None if a is None else Spec(tuple(a.shape), a.dtype) for a in s.inputs]
        inferred = op.infer(*specs, **s.attrs)
        inferred = list(inferred) if isinstance(inferred, tuple | list) else [inferred]
        if len(inferred) != len(outs):
            raise AssertionError(f"op {op.name}: infer gives {len(inferred)} outputs, forward {len(outs)} (sample {k})")
        for j, (spec, out) in enumerate(zip(inferred, outs, strict=True)):
            dims = tuple(spec.shape)
            same = len(dims) == out.ndim and all(
                isinstance(d, str) or d == n for d, n in zip(dims, out.shape, strict=True)
            )
            if not same or np.dtype(spec.dtype) != out.dtype:
                raise AssertionError(
                    f"op {op.name}: infer gives {np.dtype(spec.dtype)}{list(spec.shape)} for output {j}, forward "
                    f"produced {out.dtype}{list(out.shape)} (sample {k}: inputs "
                    f"{[None if a is None else f'{a.dtype}{list(a.shape)}' for a in s.inputs]}, attrs {s.attrs})"
                )


def _program(fn, arrays, examples=None):
    """``fn`` over the present arrays traced as ``jit.to_static`` does, with InputSpecs of their
    shapes, on ``examples`` (inputs of the same shapes and dtypes; default the arrays themselves):
    the program and its feeds."""
    present = [i for i, a in enumerate(arrays) if a is not None]
    specs = [InputSpec(list(arrays[i].shape), arrays[i].dtype, f"x{i}") for i in present]

    def call(*xs):
        full = [None] * len(arrays)
        for i, x in zip(present, xs, strict=True):
            full[i] = x
        out = fn(*full)
        return list(out) if isinstance(out, tuple) else out

    examples = arrays if examples is None else examples
    program, _ = trace(call, signatures(specs), examples=[examples[i] for i in present])
    return program, [arrays[i] for i in present]


def _other_values(others: list[Sample], k: int, sample: Sample) -> Sample:
    """Sample ``k`` of another draw when its inputs have the shapes and dtypes of ``sample``'s."""
    other = others[k] if k < len(others) else sample

    def signature(s):
        return tuple(None if a is None else (a.shape, a.dtype) for a in s.inputs)

    return other if signature(other) == signature(sample) else sample


def _check_trace(op, samples, rng):
    """Traced on another draw of the samples where it has the same shapes, so that a value frozen
    into the program (computed outside dispatch) shows as a difference. An op's
    gradient is traced too (a training step's backward is part of its program): a vjp that wraps
    values ``forward`` saved would freeze the tracing example's."""
    others = _samples(op, np.random.default_rng(int(rng.integers(2**32))))
    examples = [_other_values(others, k, s) for k, s in enumerate(samples)]
    hint = "a result that follows the tracing values means something is computed outside dispatch"
    for k, (s, example) in enumerate(zip(samples, examples, strict=True)):
        program, feeds = _program(lambda *xs, s=s: op(*xs, **s.attrs), s.inputs, example.inputs)
        what = f"op {op.name}: traced (on other values of the same shapes) and executed vs eager (sample {k}); {hint}"
        _same_outputs(Executor(program).run(feeds), _run(op, s.inputs, s.attrs), what, _EXEC_TOL)
    if not (op.vjp is not None and "vjp" not in op.exempt):
        return
    for d in _differentiable(op, samples, rng):

        def step(*xs, d=d):
            for i in d.wrt:
                xs[i].stop_gradient = False
            outs = _as_tuple(op(*xs, **d.attrs))
            cotangents = [to_tensor(c) for c in d.cotangents]
            return [*outs, *grad([outs[j] for j in d.scored], [xs[i] for i in d.wrt], cotangents, allow_unused=True)]

        program, feeds = _program(step, d.arrays, _float64(examples[d.k].inputs))
        want = (*_run(op, d.arrays, d.attrs), *_values(d.grads, d.arrays, d.wrt))
        what = f"op {op.name}: forward and gradient traced and executed vs eager (sample {d.k}, float64); {hint}"
        _same_outputs(Executor(program).run(feeds), want, what, _EXEC_TOL)


def _fusion_chain(op, attrs):
    """The op in a chain the fusion pass can group: ``neg`` after it, or before a reduction."""
    neg = REGISTRY["neg"]
    if op.kind == REDUCE:
        return lambda x, *rest: op(neg(x), *rest, **attrs)
    return lambda *xs: neg(op(*xs, **attrs))


def _check_compile(op, samples, rng):
    fused = tried = 0
    for k, s in enumerate(samples):
        outs = _run(op, s.inputs, s.attrs)
        if len(outs) != 1 or outs[0].dtype.kind != "f" or s.inputs[0] is None or s.inputs[0].dtype != outs[0].dtype:
            continue  # the compiler fuses float ops computing in their inputs' dtype
        tried += 1
        chain = _fusion_chain(op, s.attrs)
        program, feeds = _program(chain, s.inputs)
        result = PassManager(pipeline=["fuse_elementwise"]).run(program)
        groups = [g.attrs["ops"] for g in result.program.walk() if g.name == "fused_elementwise"]
        fused += any(op.name in ops for ops in groups)
        with no_grad():
            want = tuple(t.numpy() for t in _as_tuple(chain(*_tensors(s.inputs))))
        got = Executor(result.program).run(feeds)
        _same_outputs(got, want, f"op {op.name}: compiled vs eager (sample {k}, fused groups {groups})", _EXEC_TOL)
    if not tried:
        return "no sample has a float output computed in its input's dtype (the compiler fuses only those)"
    if not fused:
        skipped = result.compile_report.skipped if result.compile_report is not None else []
        raise AssertionError(
            f"op {op.name}: kind {op.kind}, but the fuse_elementwise pass left it unfused in every sample"
            f"{' (' + '; '.join(skipped) + ')' if skipped else ''}; give the record a scalar expression "
            "(expr=...) or exempt 'compile' with the reason"
        )
    return None


def _check_onnx(op, samples, rng):
    """Samples whose attrs the export rule refuses (a ConversionError: no ONNX form) are left out."""
    try:
        import onnxruntime
    except ImportError:
        return "onnxruntime is not installed (pip install 'paddlectl-framework[test]')"
    from ..onnx.export import program_to_onnx

    refused = []
    for k, s in enumerate(samples):
        arrays = [a.astype(np.float32) if a is not None and a.dtype == np.float64 else a for a in s.inputs]
        program, feeds = _program(lambda *xs, s=s: op(*xs, **s.attrs), arrays)
        try:
            model = program_to_onnx(program)
        except ConversionError as exc:
            refused.append(f"sample {k}: {exc}")
            continue
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = session.run(None, dict(zip(program.input_names, feeds, strict=True)))
        _same_outputs(
            got, _run(op, arrays, s.attrs), f"op {op.name}: onnxruntime vs eager (sample {k}, float32)", _ONNX_TOL
        )
    return "; ".join(refused) if len(refused) == len(samples) else None


_RUN = {
    "vjp": _check_vjp,
    "vjp2": _check_vjp2,
    "infer": _check_infer,
    "trace": _check_trace,
    "compile": _check_compile,
    "onnx": _check_onnx,
}
__all__ = ["CHECKS", "check_op", "default_samples", "exemptions", "skip_reason"]
