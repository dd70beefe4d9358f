"""``paddle.jit.save`` / ``paddle.jit.load``: export a Layer as a saved inference model and load it.

``save`` traces the layer in eval mode (an inference export must not update BatchNorm statistics),
writes the directory, and with ``verify_inputs`` runs the eager layer and the program *as parsed
back from its text* on the same inputs, reporting the max abs/rel difference per output and
refusing (nothing is written) when any exceeds the tolerance: a model file that merely exists is
not a success. ``load`` returns a ``TranslatedLayer``, a callable Layer over the program.
"""

from __future__ import annotations

import json

import numpy as np

from ..core.autograd import no_grad
from ..core.tensor import Parameter, Tensor
from ..errors import ConversionError
from ..nn.layer.base import Layer
from ..static.executor import Executor, bind_inputs, specialize
from ..static.input_spec import InputSpec, signatures
from ..static.ir import Program
from ..static.parser import parse_program
from ..static.printer import print_program
from ..static.replay import replay
from ..static.saved_model import ONNX_METADATA_ENTRIES, SavedModel, read_model_dir, write_model_dir
from ..static.trace import trace
from .to_static import StaticFunction


def _eager_forward(layer):
    forward = layer.__dict__.get("forward")
    if isinstance(forward, StaticFunction):
        return forward._function, forward.input_spec
    forward = getattr(type(layer), "forward", None)
    if isinstance(forward, StaticFunction):
        return forward._function.__get__(layer), forward.input_spec
    return layer.forward, None


def compare_outputs(expected: list, actual: list, names: list[str], atol: float, rtol: float) -> list[dict]:
    """Per output: max abs and rel difference and whether it is within ``atol + rtol*|expected|``."""
    report = []
    for name, e, a in zip(names, expected, actual, strict=True):
        e = np.asarray(e)
        a = np.asarray(a)
        if e.shape != a.shape or e.dtype != a.dtype:
            report.append(
                {
                    "output": name,
                    "passed": False,
                    "error": f"eager {e.dtype}{list(e.shape)} vs static {a.dtype}{list(a.shape)}",
                }
            )
            continue
        if e.dtype.kind in "fc":
            diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
            scale = np.abs(e.astype(np.float64))
            max_abs = float(diff.max()) if diff.size else 0.0
            max_rel = float((diff / np.maximum(scale, np.finfo(np.float64).tiny)).max()) if diff.size else 0.0
            passed = bool(np.all(diff <= atol + rtol * scale)) and not np.isnan(diff).any()
        else:
            mismatch = int(np.count_nonzero(a != e))
            max_abs = max_rel = float(mismatch)
            passed = mismatch == 0
        report.append({"output": name, "max_abs_diff": max_abs, "max_rel_diff": max_rel, "passed": passed})
    return report


def save(
    layer,
    path,
    input_spec=None,
    verify_inputs=None,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    output_names=None,
    preprocess: dict | None = None,
    postprocess: dict | None = None,
    format: str = "paddlectl",  # noqa: A002 - Paddle-style keyword
    lineage: dict | None = None,
    **configs,
) -> list[dict] | None:
    """Export ``layer`` to the directory ``path`` (``format="onnx"``: to the ONNX file ``path[.onnx]``);
    returns the verification report when verifying. ``lineage`` (``hapi.lineage.build_lineage``) is
    recorded as is, for licence audits."""
    if configs:
        raise TypeError(f"jit.save: unknown options {sorted(configs)}")
    if format not in ("paddlectl", "onnx"):
        raise ValueError(f"jit.save: format must be 'paddlectl' (a model directory) or 'onnx', got {format!r}")
    fn, spec_from_static = _eager_forward(layer) if isinstance(layer, Layer) else (layer, None)
    if isinstance(layer, StaticFunction):
        fn, spec_from_static = layer._function, layer.input_spec
        layer = layer.layer
    specs = input_spec if input_spec is not None else spec_from_static
    if specs is None:
        raise ValueError("jit.save: give input_spec=[InputSpec(shape, dtype, name), ...] (or to_static with one)")
    for s in [preprocess, postprocess, lineage]:
        try:
            json.dumps(s)
        except TypeError as exc:
            raise TypeError(f"jit.save: pre/post-processing config and lineage must be JSON data: {exc}") from None
    sigs = signatures(specs)
    was_training = getattr(layer, "training", False)
    if isinstance(layer, Layer):
        layer.eval()
    try:
        examples = None if verify_inputs is None else [np.asarray(getattr(a, "_data", a)) for a in verify_inputs]
        program, structure = trace(fn, sigs, layer=layer if isinstance(layer, Layer) else None, examples=examples)
        names = list(output_names) if output_names is not None else [f"output_{i}" for i in range(len(program.outputs))]
        if len(names) != len(program.outputs):
            raise ValueError(f"jit.save: {len(names)} output_names for {len(program.outputs)} outputs")
        report = None
        if examples is not None:
            report = _verify(fn, program, examples, names, atol, rtol)
    finally:
        if isinstance(layer, Layer) and was_training:
            layer.train()
    meta = {
        "inputs": [{"name": s.name, "shape": list(s.shape), "dtype": s.dtype.name} for s in sigs],
        "outputs": [
            {"name": n, "shape": list(v.shape), "dtype": v.dtype.name}
            for n, v in zip(names, program.outputs, strict=True)
        ],
        "output_structure": structure,
        "preprocess": preprocess,
        "postprocess": postprocess,
        "lineage": lineage,
        "verification": report,
    }
    if format == "onnx":
        from ..onnx.export import export_onnx

        metadata = {k: json.dumps(meta[k]) for k in ONNX_METADATA_ENTRIES if meta[k] is not None}
        export_onnx(program, path, [s.name for s in sigs], names, metadata)
        return report
    write_model_dir(path, program, meta)
    return report


def _verify(fn, program, examples, names, atol, rtol) -> list[dict]:
    with no_grad():
        out = fn(*[Tensor._wrap(e) for e in examples])
    eager = [t._data for t in ([out] if isinstance(out, Tensor) else list(out))]
    reloaded = parse_program(print_program(program), program.weights)
    static = Executor(reloaded).run(examples)
    report = compare_outputs(eager, static, names, atol, rtol)
    failed = [r for r in report if not r["passed"]]
    if failed:
        lines = "; ".join(
            f"{r['output']}: "
            + (r.get("error") or f"max abs diff {r['max_abs_diff']:.3g}, max rel diff {r['max_rel_diff']:.3g}")
            for r in failed
        )
        raise ConversionError(
            f"jit.save: the exported program does not reproduce the eager layer within atol={atol}, rtol={rtol}: "
            f"{lines}; nothing was written. Look for randomness or Python-side state in forward, or raise the tolerance"
        )
    return report


class TranslatedLayer(Layer):
    """A loaded model: call it like the original layer (Tensors or arrays in, Tensors out).

    Its weights are its parameters (float ones trainable), named as in the program with ``.`` as
    ``_``. In eval mode (as loaded) a call runs the program through the executor; after
    ``train()`` a call replays the program's ops through dispatch (``static.replay``), so a loss
    computed from the output trains the loaded model, as Paddle's ``TranslatedLayer`` does."""

    def __init__(self, saved: SavedModel, free_dead: bool = False) -> None:
        super().__init__()
        self.saved = saved
        self.program = saved.program
        self._free_dead = free_dead
        self._weights: dict[str, Parameter] = {}
        for name, array in saved.program.weights.items():
            param = Parameter(array, name=name, trainable=array.dtype.kind == "f")  # read-only until train()
            self._weights[name] = self.add_parameter(name.replace(".", "_"), param)
        self._executor, self._executed = None, None
        self.training = False

    def train(self):
        """Training mode: each weight becomes a writable copy of the loaded (shared, read-only) array."""
        for p in self._weights.values():
            if not p._data.flags.writeable:
                p.set_value(p._data)
        return super().train()

    def _current_executor(self) -> Executor:
        """The executor over the parameters' arrays (made again when training has replaced one)."""
        arrays = {name: p._data for name, p in self._weights.items()}
        ids = tuple(id(a) for a in arrays.values())
        if self._executed != ids:
            self._executor = Executor(Program(self.program.block, arrays), free_dead=self._free_dead)
            self._executed = ids
        return self._executor

    @property
    def input_spec(self) -> list[InputSpec]:
        return [InputSpec(i["shape"], i["dtype"], i["name"]) for i in self.saved.meta["inputs"]]

    @property
    def meta(self) -> dict:
        return self.saved.meta

    def forward(self, *inputs):
        tensors = [t if isinstance(t, Tensor) else Tensor._wrap(np.asarray(t)) for t in inputs]
        arrays = [t._data for t in tensors]
        if self.training:
            bind_inputs(self.program, arrays)  # the feeds checked as the executor checks them
            outs = replay(self.program, tensors, self._weights)
        else:
            outs = [Tensor._wrap(o) for o in self._current_executor().run(arrays)]
        structure = self.saved.meta.get("output_structure", "tensor")
        if structure == "tensor":
            return outs[0]
        return tuple(outs) if structure == "tuple" else outs

    def specialize(self, *shapes) -> TranslatedLayer:
        """The same model with every symbolic dim fixed by example input shapes (one per input)."""
        program = self.program
        if len(shapes) != len(program.inputs):
            raise ValueError(f"specialize: give one shape per input {program.input_names}, got {len(shapes)}")
        probes = [np.empty(tuple(s), dtype=v.dtype) for s, v in zip(shapes, program.inputs, strict=True)]
        bindings = bind_inputs(program, probes)
        fixed = specialize(program, bindings)
        meta = dict(self.saved.meta)
        meta["inputs"] = [dict(m, shape=list(v.shape)) for m, v in zip(meta["inputs"], fixed.inputs, strict=True)]
        meta["outputs"] = [dict(m, shape=list(v.shape)) for m, v in zip(meta["outputs"], fixed.outputs, strict=True)]
        return TranslatedLayer(SavedModel(self.saved.path, fixed, meta))


def load(path, **configs) -> TranslatedLayer:
    """Load a directory written by ``jit.save``; refuses a corrupted or newer-format one (CheckpointError)."""
    if configs:
        raise TypeError(f"jit.load: unknown options {sorted(configs)}")
    return TranslatedLayer(read_model_dir(path))


__all__ = ["TranslatedLayer", "compare_outputs", "load", "save"]
