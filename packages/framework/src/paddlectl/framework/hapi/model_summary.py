"""``paddle.summary`` and ``paddle.flops``: run a model once with forward hooks and tabulate each
layer's shapes, parameter counts and multiply-accumulate counts, in Paddle's table format."""

from __future__ import annotations

import numbers
from collections import OrderedDict

import numpy as np

from .. import nn
from ..core.autograd import no_grad
from ..core.tensor import Tensor
from ..ops import creation
from ..static.trace import InputSignature, trace_once
from .flop_counts import program_flops


def _all_numbers(items) -> bool:
    return all(isinstance(i, numbers.Number) for i in items)


def _shape_of(value):
    if isinstance(value, Tensor):
        return list(value.shape)
    if isinstance(value, list | tuple):
        return [_shape_of(v) for v in value]
    return []


def _build_input(input_size, dtypes):
    if _all_numbers(input_size):
        dtype = dtypes[0] if isinstance(dtypes, list | tuple) else dtypes
        size = [1 if d is None or d == -1 else int(d) for d in input_size]
        return creation.rand(size).astype(dtype)
    return [_build_input(i, d) for i, d in zip(input_size, dtypes, strict=True)]


def _build_dtypes(input_size, dtype):
    if _all_numbers(input_size):
        return [dtype]
    return [_build_dtypes(i, dtype) for i in input_size]


def _forward_with_hooks(model, inputs, make_hook, skip_containers: bool):
    """Call ``model`` once with ``make_hook(layer)`` attached as a post-hook to every layer."""
    depth = len(model.sublayers())
    handles = []
    for layer in model.sublayers(include_self=True):
        if skip_containers and (isinstance(layer, nn.Sequential | nn.LayerList) or (layer is model and depth >= 1)):
            continue
        handles.append(layer.register_forward_post_hook(make_hook(layer)))
    try:
        with no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()


def _layer_key(layer, taken: int) -> str:
    try:
        index = int(layer._full_name.split("_")[-1])
    except ValueError:
        index = taken
    return f"{type(layer).__name__}-{index + 1}"


def summary_string(model, input_size=None, dtypes=None, input=None):  # noqa: A002 - Paddle's name
    """The table as text, and ``{'total_params', 'trainable_params'}``."""
    if input is None and input_size is None:
        raise ValueError("summary: pass input_size (e.g. (1, 3, 224, 224)) or input (a tensor or list of tensors)")
    if isinstance(input_size, tuple):
        input_size = [input_size]
    rows: OrderedDict[str, dict] = OrderedDict()

    def make_hook(layer):
        def hook(layer, inputs, outputs):
            params = trainable = 0
            for p in layer._parameters.values():
                if p is None:
                    continue
                params += int(np.prod(p.shape))
                trainable += int(np.prod(p.shape)) if p.trainable else 0
            rows[_layer_key(layer, len(rows))] = {
                "input_shape": _shape_of(inputs),
                "output_shape": _shape_of(outputs),
                "nb_params": params,
                "trainable_params": trainable,
            }

        return hook

    if input is not None:
        inputs = list(input) if isinstance(input, list | tuple) else [input]
    else:
        if not isinstance(dtypes, list | tuple):
            dtypes = _build_dtypes(input_size, dtypes or "float32")
        inputs = _build_input(input_size, dtypes)
        inputs = [inputs] if isinstance(inputs, Tensor) else inputs
    _forward_with_hooks(model, inputs, make_hook, skip_containers=True)
    return _format(rows, input_size if input is None else [list(t.shape) for t in inputs])


def _format(rows, input_size):
    widths = {"layer": 15, "input": 20, "output": 20, "params": 15}
    for key, row in rows.items():
        widths["layer"] = max(widths["layer"], len(key))
        widths["input"] = max(widths["input"], len(str(row["input_shape"])))
        widths["output"] = max(widths["output"], len(str(row["output_shape"])))
        widths["params"] = max(widths["params"], len(str(row["nb_params"])))
    table = max(75, sum(widths.values()) + 5)

    def line(a, b, c, d):
        return f"{a:^{widths['layer']}} {b:^{widths['input']}} {c:^{widths['output']}} {d:^{widths['params']}}\n"

    text = "-" * table + "\n" + line("Layer (type)", "Input Shape", "Output Shape", "Param #") + "=" * table + "\n"
    total_params = trainable_params = 0
    total_output = 0
    for key, row in rows.items():
        text += line(key, str(row["input_shape"]), str(row["output_shape"]), f"{row['nb_params']:,}")
        total_params += row["nb_params"]
        trainable_params += row["trainable_params"]
        total_output += _count_elements(row["output_shape"])
    input_mb = _input_size_mb(input_size)
    output_mb = abs(2.0 * total_output * 4.0 / (1024**2.0))  # x2 for gradients
    params_mb = abs(total_params * 4.0 / (1024**2.0))
    text += "=" * table + "\n"
    text += f"Total params: {total_params:,}\nTrainable params: {trainable_params:,}\n"
    text += f"Non-trainable params: {total_params - trainable_params:,}\n" + "-" * table + "\n"
    text += f"Input size (MB): {input_mb:0.2f}\nForward/backward pass size (MB): {output_mb:0.2f}\n"
    text += f"Params size (MB): {params_mb:0.2f}\nEstimated Total Size (MB): {params_mb + output_mb + input_mb:0.2f}\n"
    text += "-" * table + "\n"
    return text, {"total_params": total_params, "trainable_params": trainable_params}


def _count_elements(shape) -> int:
    if not shape:
        return 0
    if _all_numbers(shape):
        return int(np.prod(shape))
    return sum(_count_elements(s) for s in shape)


def _input_size_mb(input_size) -> float:
    if _all_numbers(input_size):
        return abs(float(np.prod([1 if d is None or d == -1 else d for d in input_size])) * 4.0 / (1024**2.0))
    return sum(_input_size_mb(i) for i in input_size)


def summary(net, input_size=None, dtypes=None, input=None):  # noqa: A002
    """Print the per-layer table and return ``{'total_params': int, 'trainable_params': int}``."""
    text, params = summary_string(net, input_size, dtypes, input)
    print(text)
    return params


# ----- flops ----------------------------------------------------------------------------------


COUNTED = (
    "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "BatchNorm2D", "BatchNorm",
    "LeakyReLU", "Linear", "AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D",
)  # fmt: skip
"""The layers Paddle counts (``paddle.hapi.dynamic_flops``); every other layer counts zero (Paddle
lists ReLU, ReLU6, Dropout and average pooling as zero, and computes average pooling's count but
never adds it). A counted layer counts the ops its forward runs, by their records' flop rules."""


def _layer_flops(layer, inputs) -> int:
    """The flop count of the ops ``layer.forward`` runs on ``inputs``, traced once at their shapes
    (in eval mode: a training BatchNorm's statistics update cannot be traced, and counts the same)."""
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    signatures = [InputSignature(f"x{i}", tuple(t.shape), np.dtype(t.dtype)) for i, t in enumerate(tensors)]
    was_training = layer.training
    layer.eval()
    try:
        program, _ = trace_once(layer.forward, signatures, {}, layer, [t.numpy() for t in tensors])
    finally:
        if was_training:
            layer.train()
    return program_flops(program)


def flops(net, input_size, custom_ops=None, print_detail=False):
    """Multiply-accumulate count of one forward pass on an input of ``input_size``, by Paddle's rules;
    ``custom_ops`` maps a layer class to ``fn(layer, inputs, output)`` adding to ``layer.total_ops``."""
    custom_ops = custom_ops or {}
    counted = {getattr(nn, n) for n in COUNTED if hasattr(nn, n)}
    records = []

    def make_hook(layer):
        def hook(layer, inputs, outputs):
            if layer.sublayers():
                return
            x = inputs[0] if inputs else None
            y = outputs[0] if isinstance(outputs, list | tuple) else outputs
            if type(layer) in custom_ops:
                layer.total_ops = 0
                custom_ops[type(layer)](layer, inputs, outputs)
                ops = int(layer.total_ops)
            else:
                ops = _layer_flops(layer, inputs) if type(layer) in counted else 0
            params = sum(int(np.prod(p.shape)) for p in layer.parameters())
            records.append((layer._full_name, list(x.shape) if x is not None else [], list(y.shape), params, ops))

        return hook

    _forward_with_hooks(net, [creation.rand(list(input_size))], make_hook, skip_containers=False)
    total = sum(r[4] for r in records)
    if print_detail:
        header = f"{'Layer Name':<24}{'Input Shape':<22}{'Output Shape':<22}{'Params':>12}{'Flops':>14}"
        print(header + "\n" + "-" * len(header))
        for name, xs, ys, params, ops in records:
            print(f"{name:<24}{str(xs):<22}{str(ys):<22}{params:>12}{ops:>14}")
        print(f"Total Flops: {total}     Total Params: {sum(r[3] for r in records)}")
    return total
