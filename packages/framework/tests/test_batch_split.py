"""A batch in parts, one per thread: only programs that provably keep their items apart split, only
when each part's ops are big enough, and the parts compute what the whole batch computes."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import inference, jit, nn
from paddlectl.framework.inference import batch_split
from paddlectl.framework.jit import InputSpec
from paddlectl.framework.static.executor import Executor
from paddlectl.framework.static.input_spec import signatures
from paddlectl.framework.static.trace import trace


def _program(fn, *specs):
    program, _ = trace(fn, signatures([InputSpec(s, "float32", f"x{i}") for i, s in enumerate(specs)]))
    return program


def _axes(fn, *specs):
    found = batch_split.item_axes(_program(fn, *specs))
    return None if found is None else found[0]


KEEP_ITEMS = {
    "conv, pool, resize, flatten into a linear layer": (
        lambda x: (
            paddle.nn.functional.interpolate(
                paddle.nn.functional.max_pool2d(paddle.nn.functional.conv2d(x, paddle.ones([4, 3, 3, 3])), 2),
                scale_factor=2,
            ).reshape([x.shape[0], -1])
            @ paddle.ones([256, 5])
        ),
        [None, 3, 10, 10],
    ),
    "softmax and a mean off the batch": (lambda x: paddle.nn.functional.softmax(x, axis=-1).mean(axis=1), [None, 4, 6]),
    "the batch moved by a transpose, then taken whole": (
        lambda x: x.reshape([x.shape[0], 2, 3, 4]).transpose([1, 0, 2, 3])[0] + 1,
        [None, 6, 4],
    ),
    "concat off the batch": (lambda x: paddle.concat([x, x * 2], axis=1), [None, 3]),
    "layer norm, a slice of the features, a running sum along them": (
        lambda x: (
            paddle.cumsum(paddle.nn.functional.layer_norm(x, [8])[:, :, 2:6], axis=2) + paddle.ones_like(x[:, :, :4])
        ),
        [None, 5, 8],
    ),
}


def _batch_norm(training):
    return lambda x: paddle.nn.functional.batch_norm(x, paddle.zeros([3]), paddle.ones([3]), training=training)


KEEP_ITEMS["batch norm with its running statistics"] = (_batch_norm(False), [None, 3, 4, 4])

MIX_ITEMS = {
    "batch norm with the batch's own statistics": (_batch_norm(True), [None, 3, 4, 4]),
    "softmax over the batch": (lambda x: paddle.nn.functional.softmax(x, axis=0), [None, 4]),
    "a running sum over the batch": (lambda x: paddle.cumsum(x, axis=0), [None, 4]),
    "layer norm over the batch too": (lambda x: paddle.nn.functional.layer_norm(x, [x.shape[0], 4]), [None, 4]),
    "a mean over the batch, kept as a dim": (lambda x: x - x.mean(axis=0, keepdim=True), [None, 4]),
    "a reshape that merges the batch": (lambda x: x.reshape([-1]), [None, 4]),
    "the batch reversed": (lambda x: x[::-1] * 1, [None, 4]),
    "a transpose that puts the batch in a matrix product's sum": (lambda x: x.transpose([1, 0]) @ x, [None, 4]),
    "a fixed batch": (lambda x: x * 2, [3, 4]),
}


@pytest.mark.parametrize("name", KEEP_ITEMS)
def test_programs_that_keep_items_apart_are_found(name):
    fn, spec = KEEP_ITEMS[name]
    assert _axes(fn, spec) == [0]


@pytest.mark.parametrize("name", MIX_ITEMS)
def test_programs_that_mix_items_are_kept_whole(name):
    fn, spec = MIX_ITEMS[name]
    assert _axes(fn, spec) is None


def test_an_op_without_a_rule_keeps_the_program_whole(monkeypatch):
    from paddlectl.framework.core.op import REGISTRY

    fn, spec = KEEP_ITEMS["concat off the batch"]
    monkeypatch.setattr(REGISTRY["concat"], "items", None)
    assert _axes(fn, spec) is None


class _Convs(nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2D(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2D(32, 32, 3, padding=1))
        self.eval()

    def forward(self, x):
        return nn.functional.softmax(self.body(x).mean(axis=[2, 3]), axis=-1)


@pytest.fixture(scope="module")
def convs(tmp_path_factory):
    paddle.seed(3)
    path = tmp_path_factory.mktemp("convs") / "m"
    jit.save(_Convs(), path, input_spec=[InputSpec([None, 3, 48, 48], "float32", "x")])
    return path


def _predictor(path, threads):
    config = inference.Config(str(path))
    config.set_cpu_math_library_num_threads(threads)
    config.switch_optim_cache(False)
    return inference.create_predictor(config)


def test_a_big_enough_batch_runs_in_parts_that_compute_the_same(convs, monkeypatch):
    from paddlectl.framework.inference import predictor

    monkeypatch.setattr(predictor, "free_cores", lambda: 2)  # as on an idle machine
    two, one = _predictor(convs, 2), _predictor(convs, 1)
    split = two._model.batch_split
    x = np.random.default_rng(0).standard_normal((8, 3, 48, 48)).astype(np.float32)
    assert split.parts([x], 2) == 2 and split.parts([x], 1) == 1
    assert split.parts([x[:1]], 2) == 1  # one item: nothing to split
    calls = []
    original = split.run
    monkeypatch.setattr(split, "run", lambda arrays, parts: calls.append(parts) or original(arrays, parts))
    np.testing.assert_allclose(two.run([x])[0], one.run([x])[0], rtol=1e-5, atol=1e-6)
    assert calls == [2]


def test_small_ops_run_whole(convs, monkeypatch):
    monkeypatch.setattr(batch_split, "MIN_PART_ELEMENTS", 1 << 40)
    predictor = _predictor(convs, 2)
    x = np.zeros((8, 3, 48, 48), np.float32)
    assert predictor._model.batch_split.parts([x], 2) == 1


def test_parts_join_along_each_outputs_batched_axis():
    program = _program(lambda x: (x * 2).transpose([1, 0, 2]), [None, 3, 2])
    executor = Executor(program)
    split = batch_split.BatchSplit(program, executor)
    assert split._plan[0] == [1]
    x = np.arange(5 * 3 * 2, dtype=np.float32).reshape(5, 3, 2)
    np.testing.assert_array_equal(split.run([x], 2)[0], executor.run([x])[0])


def test_a_fixed_batch_program_is_made_general_unless_its_shapes_name_the_batch_size():
    conv = batch_split.generalized(
        _program(KEEP_ITEMS["conv, pool, resize, flatten into a linear layer"][0], [4, 3, 10, 10])
    )
    assert conv is not None and conv.inputs[0].shape == (batch_split.SYMBOL, 3, 10, 10)
    assert batch_split.item_axes(conv) == ([0], batch_split.SYMBOL)
    kept = batch_split.generalized(_program(lambda x: x.reshape([4, 2, 3]) * 2, [4, 6]))
    assert batch_split.item_axes(kept) == ([0], batch_split.SYMBOL)  # traced as "keep dim 0"
    merged = batch_split.generalized(_program(lambda x: x.reshape([2, 12]) * 2, [4, 6]))
    assert merged is None or batch_split.item_axes(merged) is None  # the size itself is in the program
    assert batch_split.generalized(_program(lambda x: x * 2, [1, 6])) is None  # one item: nothing to split


def test_a_fixed_batch_model_runs_in_parts(tmp_path, monkeypatch):
    from paddlectl.framework.inference import predictor

    monkeypatch.setattr(predictor, "free_cores", lambda: 2)
    paddle.seed(4)
    jit.save(_Convs(), tmp_path / "m", input_spec=[InputSpec([8, 3, 48, 48], "float32", "x")])
    two, one = _predictor(tmp_path / "m", 2), _predictor(tmp_path / "m", 1)
    x = np.random.default_rng(1).standard_normal((8, 3, 48, 48)).astype(np.float32)
    assert two._model.batch_split.parts([x], 2) == 2
    np.testing.assert_allclose(two.run([x])[0], one.run([x])[0], rtol=1e-5, atol=1e-6)


def test_a_general_copy_that_fails_to_run_falls_back_to_the_whole_batch(tmp_path, monkeypatch):
    from paddlectl.framework.inference import predictor

    monkeypatch.setattr(predictor, "free_cores", lambda: 2)
    paddle.seed(5)
    jit.save(_Convs(), tmp_path / "m", input_spec=[InputSpec([8, 3, 48, 48], "float32", "x")])
    two, one = _predictor(tmp_path / "m", 2), _predictor(tmp_path / "m", 1)
    split = two._model.batch_split
    x = np.random.default_rng(2).standard_normal((8, 3, 48, 48)).astype(np.float32)
    assert split.parts([x], 2) == 2

    def refuse(feeds):
        raise RuntimeError("a lowering that needs the fixed size")

    monkeypatch.setattr(split._plan[2], "run", refuse)
    np.testing.assert_allclose(two.run([x])[0], one.run([x])[0], rtol=1e-5, atol=1e-6)
    assert split.parts([x[:4].repeat(2, axis=0)], 2) == 1  # from now on the model runs whole
