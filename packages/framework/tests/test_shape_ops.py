"""Shape ops: split/chunk/unbind, tile/expand, flip/roll, tril/triu, slice, pad.

Each op is checked against real Paddle (outputs and gradients under one random cotangent) and by
finite differences; shape rules are checked on symbolic dims; bad inputs raise ShapeError.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.core.op import Spec
from paddlectl.framework.errors import ShapeError
from paddlectl.framework.ops import shape as shape_ops

RNG = np.random.default_rng(0)
F32 = np.dtype("float32")


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _outputs(out) -> list:
    return list(out) if isinstance(out, list | tuple) else [out]


def _run(P, fn, arrays, seed):
    """Outputs and input gradients of ``fn(P, *tensors)`` under a seeded random cotangent."""
    tensors = [P.to_tensor(a, stop_gradient=a.dtype.kind != "f") for a in arrays]
    outs = _outputs(fn(P, *tensors))
    rng = np.random.default_rng(seed)
    loss = None
    for o in outs:
        value = np.asarray(o.numpy())
        if value.dtype.kind == "f":
            term = (o * P.to_tensor(rng.standard_normal(value.shape).astype(value.dtype))).sum()
            loss = term if loss is None else loss + term
    if loss is not None and not loss.stop_gradient:
        loss.backward()
    grads = [None if t.stop_gradient or t.grad is None else np.asarray(t.grad.numpy()) for t in tensors]
    return [np.asarray(o.numpy()) for o in outs], grads


def compare(real, fn, *arrays, rtol=1e-5, atol=1e-6, seed=0):
    """``fn(P, *tensors)`` must give the same outputs and gradients with paddlectl and real Paddle."""
    arrays = [np.asarray(a) for a in arrays]
    got, got_grads = _run(ours, fn, arrays, seed)
    want, want_grads = _run(real, fn, arrays, seed)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    for i, (g, w) in enumerate(zip(got_grads, want_grads, strict=True)):
        if w is None:
            assert g is None or not np.any(g), f"input {i}: paddle has no gradient, ours is non-zero"
            continue
        assert g is not None, f"input {i}: paddle has a gradient, ours has none"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


def single(fn):
    """``fn`` over our module, its outputs flattened and weighted into one tensor for gradcheck."""

    def wrapped(*tensors):
        outs = [o for o in _outputs(fn(ours, *tensors)) if o.dtype.kind == "f"]
        if len(outs) == 1:
            return outs[0]
        return ours.concat([o.flatten() * float(i + 1) for i, o in enumerate(outs)])

    return wrapped


CASES = {
    "split_int": (lambda P, x: P.split(x, 3, axis=1), [(2, 6, 2)]),
    "split_sections_-1": (lambda P, x: P.split(x, [2, -1, 1], axis=-1), [(3, 7)]),
    "split_zero_section": (lambda P, x: P.split(x, [0, 4], axis=0), [(4, 2)]),
    "split_method": (lambda P, x: x.split([1, 2]), [(3, 2)]),
    "chunk": (lambda P, x: P.chunk(x, 2, axis=-2), [(2, 4, 3)]),
    "unbind": (lambda P, x: P.unbind(x, axis=1), [(2, 3, 2)]),
    "tile": (lambda P, x: P.tile(x, [2, 1, 3]), [(2, 3)]),
    "tile_same_rank": (lambda P, x: x.tile([1, 2]), [(3, 2)]),
    "tile_short_reps": (lambda P, x: P.tile(x, [2]), [(2, 3)]),
    "tile_empty": (lambda P, x: P.tile(x, [2, 1]), [(0, 3)]),
    "expand": (lambda P, x: P.expand(x, [2, -1, 4]), [(3, 1)]),
    "expand_method": (lambda P, x: x.expand([3, 2]), [(2,)]),
    "broadcast_to": (lambda P, x: P.broadcast_to(x, [2, 3, 4]), [(1, 4)]),
    "expand_as": (lambda P, x, y: P.expand_as(x, y) * y, [(3, 1), (2, 3, 4)]),
    "flip": (lambda P, x: P.flip(x, [0, -1]), [(2, 3, 4)]),
    "flip_int_axis": (lambda P, x: x.flip(1), [(2, 3)]),
    "roll_flat": (lambda P, x: P.roll(x, 2), [(2, 3)]),
    "roll_axes": (lambda P, x: P.roll(x, [1, -2], axis=[0, 2]), [(2, 3, 4)]),
    "tril": (lambda P, x: P.tril(x), [(4, 3)]),
    "tril_batched": (lambda P, x: P.tril(x, -1), [(2, 3, 4)]),
    "triu": (lambda P, x: P.triu(x, 1), [(3, 5)]),
    "triu_method": (lambda P, x: x.triu(-1), [(2, 3, 3)]),
    "slice": (lambda P, x: P.slice(x, [0, 2], [-2, 1], [100, -1]), [(3, 4, 5)]),
    "slice_method": (lambda P, x: x.slice([1], [1], [3]), [(2, 4)]),
    "slice_empty": (lambda P, x: P.slice(x, [1], [3], [2]), [(2, 4)]),
    "strided_slice": (lambda P, x: P.strided_slice(x, [1, 2], [-1, 0], [0, 5], [-1, 2]), [(2, 4, 5)]),
    "non_contiguous_flip": (lambda P, x: P.flip(x.transpose([1, 0]), 0), [(3, 4)]),
    "non_contiguous_split": (lambda P, x: P.split(x.transpose([1, 0]), 2, axis=1), [(4, 3)]),
}


@pytest.mark.parametrize("case", CASES)
def test_matches_paddle(real_paddle, case):
    fn, shapes = CASES[case]
    compare(real_paddle, fn, *[r(*s) for s in shapes])


@pytest.mark.parametrize("case", [c for c in CASES if "empty" not in c])
def test_gradients_match_finite_differences(gradcheck, case):
    fn, shapes = CASES[case]
    gradcheck(single(fn), *[r(*s) for s in shapes])


PADS = {
    "all_dims_in_order": ([1, 0, 2, 0, 0, 0, 0, 1], "constant", None, (2, 2, 3, 4)),
    "nchw": ([1, 2, 0, 1], "constant", "NCHW", (1, 2, 3, 4)),
    "nhwc": ([1, 2, 0, 1], "constant", "NHWC", (1, 3, 4, 2)),
    "ncl": ([2, 1], "constant", "NCL", (2, 2, 3)),
    "nlc": ([2, 1], "constant", "NLC", (2, 3, 2)),
    "ncdhw": ([1, 0, 0, 1, 1, 1], "constant", "NCDHW", (1, 1, 2, 2, 3)),
    "negative_crop": ([-1, 2, 1, -1], "constant", "NCHW", (1, 1, 3, 4)),
    "reflect": ([2, 1, 1, 2], "reflect", "NCHW", (1, 2, 3, 4)),
    "replicate": ([3, 1, 0, 2], "replicate", "NCHW", (1, 2, 3, 4)),
    "circular": ([4, 1, 2, 0], "circular", "NCHW", (1, 2, 3, 3)),
    "reflect_ncl": ([2, 2], "reflect", "NCL", (2, 2, 4)),
    "replicate_ndhwc": ([1, 1, 0, 1, 1, 0], "replicate", "NDHWC", (1, 2, 2, 3, 2)),
}


@pytest.mark.parametrize("case", PADS)
def test_pad_matches_paddle_and_finite_differences(real_paddle, gradcheck, case):
    pad, mode, fmt, shape = PADS[case]
    kwargs = {"mode": mode, "value": 0.5 if mode == "constant" else 0.0}
    if fmt is not None:
        kwargs["data_format"] = fmt
    fn = lambda P, x: P.nn.functional.pad(x, pad, **kwargs)  # noqa: E731
    compare(real_paddle, fn, r(*shape))
    gradcheck(single(fn), r(*shape))


def test_pad_without_data_format_pads_trailing_dims(real_paddle):
    compare(real_paddle, lambda P, x: P.nn.functional.pad(x, [1, 1, 2, 0]), r(2, 3, 4))
    compare(real_paddle, lambda P, x: P.nn.functional.pad(x, [1, 1]), r(2, 3))
    every_dim_from_the_right = lambda P, x: P.nn.functional.pad(x, [1, 0, 2, 0, 0, 0, 0, 1], pad_from_left_axis=False)  # noqa: E731
    compare(real_paddle, every_dim_from_the_right, r(1, 2, 3, 4))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: ours.split(x, 4, axis=1), "evenly"),
        (lambda x: ours.split(x, [2, 2]), "add up"),
        (lambda x: ours.split(x, [-1, -1, 1]), "one section"),
        (lambda x: ours.split(x, 2, axis=3), "out of range"),
        (lambda x: ours.expand(x, [3, 5]), "cannot expand"),
        (lambda x: ours.expand(x, [6]), "fewer dims"),
        (lambda x: ours.tile(x, [-1, 1]), "non-negative"),
        (lambda x: ours.flip(x, [2]), "out of range"),
        (lambda x: ours.roll(x, [1, 2], axis=[0]), "same length"),
        (lambda x: ours.roll(x, [1, 2]), "one number"),
        (lambda x: ours.tril(x[0]), "at least 2 dims"),
        (lambda x: ours.slice(x, [0, 1], [0], [1]), "same length"),
        (lambda x: ours.strided_slice(x, [0], [0], [1], [0]), "stride 0"),
        (lambda x: ours.nn.functional.pad(x, [1, 1], mode="reflect", data_format="NCL"), "smaller than"),
        (lambda x: ours.nn.functional.pad(x, [1]), "pairs"),
        (lambda x: ours.nn.functional.pad(x, [-1, 0], mode="replicate", data_format="NCL"), "mode='constant'"),
        (lambda x: ours.nn.functional.pad(x, [1, 1, 1, 1, 1, 1], data_format="NCL"), "spatial"),
        (lambda x: ours.nn.functional.pad(x, [-2, -1], data_format="NCL"), "crops more"),
    ],
)
def test_bad_input_raises_shape_error(call, message):
    x = ours.to_tensor(r(2, 1))
    with pytest.raises(ShapeError, match=message) as info:
        call(x)
    assert str(info.value).split(":")[0] in (
        "split",
        "expand",
        "tile",
        "flip",
        "roll",
        "tril",
        "slice",
        "strided_slice",
        "pad",
    )
    assert any(shape in str(info.value) for shape in ("[2, 1]", "rank 2", "x[1]"))  # names what it got


def test_unbind_of_an_empty_axis_is_an_empty_list(real_paddle):
    assert ours.unbind(ours.ones([0, 3])) == [] == real_paddle.unbind(real_paddle.ones([0, 3]))


def test_pad_rejects_unknown_mode():
    with pytest.raises(ValueError, match="mode must be one of"):
        ours.nn.functional.pad(ours.ones([1, 1, 2]), [1, 1], mode="edge")


def test_shape_rules_keep_symbolic_dims():
    x = Spec(("N", 3, 4), F32)
    assert shape_ops.flip_op.infer(x, axis=(0,)).shape == ("N", 3, 4)
    assert shape_ops.roll_op.infer(x, shifts=(1,), axis=(0,)).shape == ("N", 3, 4)
    assert shape_ops.tile_op.infer(x, reps=(1, 2, 1)).shape == ("N", 6, 4)
    assert shape_ops.tile_op.infer(x, reps=(2, 1, 1)).shape == ("2*N", 3, 4)
    assert shape_ops.expand_op.infer(Spec((1, 4), F32), shape=("N", 3, 4)).shape == ("N", 3, 4)
    parts = shape_ops.split_op.infer(x, axis=2, sections=(1, 3))
    assert [p.shape for p in parts] == [("N", 3, 1), ("N", 3, 3)]
    sliced = shape_ops.strided_slice_op.infer(x, index=((None, None, None), (1, None, None), (None, None, -2)))
    assert sliced.shape == ("N", 2, 2)
    padded = shape_ops.pad_op.infer(x, pads=((0, 0), (1, 1), (2, 0)), mode="constant", value=0.0)
    assert padded.shape == ("N", 5, 6)


def test_ops_record_their_declared_outputs():
    """The op's forward output shape agrees with its own shape rule for concrete inputs."""
    x = ours.to_tensor(r(2, 3, 4))
    assert shape_ops.tile_op.infer(Spec((2, 3, 4), F32), reps=(2, 1, 3)).shape == tuple(ours.tile(x, [2, 1, 3]).shape)
    index = ((None, None, None), (2, 0, -1), (1, None, 2))
    assert shape_ops.strided_slice_op.infer(Spec((2, 3, 4), F32), index=index).shape == tuple(
        ours.strided_slice(x, [1, 2], [2, 1], [0, 100], [-1, 2]).shape
    )
