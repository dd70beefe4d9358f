"""``nn.Embedding(sparse=True)``: the table's gradient is a SelectedRows (rows + values + height)
equal to the dense gradient, accumulated, cleared, clipped and unscaled as Paddle's is."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.core.selected_rows import SelectedRows
from paddlectl.framework.errors import PaddlectlError

IDS = [[1, 2], [2, 5]]


def _pair(num=10, dim=3, **kwargs):
    """A sparse and a dense Embedding with the same weights."""
    sparse = paddle.nn.Embedding(num, dim, sparse=True, **kwargs)
    dense = paddle.nn.Embedding(num, dim, sparse=False, **kwargs)
    dense.weight.set_value(sparse.weight.numpy())
    return sparse, dense


def _loss(layer, ids, head):
    return (layer(paddle.to_tensor(ids)) * head).sum()


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True}])
def test_sparse_gradient_equals_dense(kwargs):
    sparse, dense = _pair(**kwargs)
    head = paddle.to_tensor(np.random.default_rng(0).standard_normal((2, 2, 3)).astype("float32"))
    _loss(sparse, IDS, head).backward()
    _loss(dense, IDS, head).backward()
    grad = sparse.weight.grad
    assert isinstance(grad, SelectedRows) and grad.is_selected_rows()
    assert grad.rows() == [1, 2, 2, 5] and grad.height() == 10 and grad.shape == [4, 3]  # Paddle's view
    assert not dense.weight.grad.is_selected_rows()
    np.testing.assert_allclose(grad.to_dense().numpy(), dense.weight.grad.numpy(), rtol=1e-6)


def test_functional_embedding_sparse():
    weight = paddle.create_parameter([6, 2], "float32")
    out = paddle.nn.functional.embedding(paddle.to_tensor([0, 4, 4]), weight, sparse=True)
    out.sum().backward()
    assert weight.grad.rows() == [0, 4, 4]
    np.testing.assert_array_equal(weight.grad.numpy(), np.ones((3, 2), "float32"))


def test_sparse_plus_sparse_merges_rows_as_paddle():
    layer, _ = _pair()
    _loss(layer, IDS, 1.0).backward()
    _loss(layer, [7], 2.0).backward()
    grad = layer.weight.grad
    assert grad.rows() == [1, 2, 5, 7]  # Paddle 3.3.1 gives these rows and values
    np.testing.assert_array_equal(grad.numpy()[:, 0], [1, 2, 1, 2])


def test_dense_gradient_meeting_sparse_one_densifies():
    sparse, dense = _pair()
    for layer in (sparse, dense):
        (_loss(layer, IDS, 1.0) + (layer.weight * 3.0).sum()).backward()
        _loss(layer, [3], 1.0).backward()  # then sparse into the dense gradient
    assert not sparse.weight.grad.is_selected_rows()
    np.testing.assert_allclose(sparse.weight.grad.numpy(), dense.weight.grad.numpy())


def test_table_computed_by_other_ops_gets_a_dense_gradient():
    """Only a leaf table's .grad can hold rows; an intermediate table passes a dense gradient on."""
    base = paddle.create_parameter([5, 2], "float32")
    out = paddle.nn.functional.embedding(paddle.to_tensor([1, 1]), base * 2.0, sparse=True)
    out.sum().backward()
    expected = np.zeros((5, 2), "float32")
    expected[1] = 4.0
    np.testing.assert_array_equal(base.grad.numpy(), expected)


def test_paddle_grad_and_create_graph_give_dense_gradients():
    layer, _ = _pair()
    (grad,) = paddle.grad(_loss(layer, IDS, 1.0), [layer.weight])
    assert not grad.is_selected_rows() and grad.shape == [10, 3]
    assert grad.numpy()[2, 0] == 2.0


@pytest.mark.parametrize("how", ["param", "layer", "optimizer"])
def test_clear_grad_drops_a_sparse_gradient(how):
    layer, _ = _pair()
    opt = paddle.optimizer.SGD(0.1, parameters=layer.parameters())
    _loss(layer, IDS, 1.0).backward()
    {"param": layer.weight.clear_grad, "layer": layer.clear_gradients, "optimizer": opt.clear_grad}[how]()
    assert layer.weight.grad is None  # as Paddle's: zeroing would keep the old rows forever
    _loss(layer, [7], 1.0).backward()
    assert layer.weight.grad.rows() == [7]


def test_hooks_see_a_dense_gradient():
    """DataParallel's all-reduce is a gradient hook on table-shaped buffers: a hooked table is dense."""
    layer, dense = _pair()
    seen = []
    layer.weight.register_hook(lambda g: seen.append(g.shape))
    _loss(layer, IDS, 1.0).backward()
    _loss(dense, IDS, 1.0).backward()
    assert seen == [[10, 3]] and not layer.weight.grad.is_selected_rows()
    np.testing.assert_array_equal(layer.weight.grad.numpy(), dense.weight.grad.numpy())


@pytest.mark.parametrize(
    "clip",
    [paddle.nn.ClipGradByGlobalNorm(0.5), paddle.nn.ClipGradByNorm(0.5), paddle.nn.ClipGradByValue(0.3)],
    ids=["global_norm", "norm", "value"],
)
def test_clipping_a_sparse_gradient_clips_the_dense_one(clip):
    """Clips see merged rows (a repeated id's norm is its summed row's), so sparse and dense agree."""
    sparse, dense = _pair()
    for layer in (sparse, dense):
        opt = paddle.optimizer.SGD(1.0, parameters=layer.parameters(), grad_clip=clip)
        _loss(layer, IDS, 1.0).backward()
        opt.step()
    np.testing.assert_allclose(sparse.weight.numpy(), dense.weight.numpy(), rtol=1e-6)


def test_grad_scaler_unscales_a_sparse_gradient():
    sparse, dense = _pair()
    for layer in (sparse, dense):
        opt = paddle.optimizer.SGD(1.0, parameters=layer.parameters())
        scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)
        scaler.scale(_loss(layer, IDS, 1.0)).backward()
        scaler.step(opt)
    assert sparse.weight.grad.is_selected_rows()
    np.testing.assert_allclose(sparse.weight.numpy(), dense.weight.numpy(), rtol=1e-6)


def test_selected_rows_validates_its_shape():
    with pytest.raises(ValueError, match="values must be"):
        SelectedRows([0, 1], np.zeros((3, 2)), 4)


class _Tower(paddle.nn.Layer):
    def __init__(self, sparse):
        super().__init__()
        self.table = paddle.nn.Embedding(20, 4, sparse=sparse)
        self.head = paddle.nn.Linear(4, 1)

    def forward(self, ids):
        return self.head(self.table(ids).mean(axis=1))


def test_a_sparse_model_exports_and_predicts_as_the_dense_one(tmp_path):
    from paddlectl.framework import inference, jit
    from paddlectl.framework.jit import InputSpec

    ids = np.array([[1, 4, 4], [19, 0, 7]], dtype="int64")
    trained = _Tower(sparse=True)
    opt = paddle.optimizer.Adam(0.1, parameters=trained.parameters(), lazy_mode=True)
    trained(paddle.to_tensor(ids)).sum().backward()
    opt.step()
    twin = _Tower(sparse=False)
    twin.set_state_dict(trained.state_dict())
    outputs, programs = {}, {}
    for name, model in (("sparse", trained), ("dense", twin)):
        model.eval()
        path = str(tmp_path / name)
        jit.save(model, path, input_spec=[InputSpec([None, 3], "int64", "ids")])
        predictor = inference.create_predictor(inference.Config(path))
        outputs[name] = predictor.run([ids])[0]
        programs[name] = [op.name for op in predictor.optimized_program.walk()]
        with paddle.no_grad():
            np.testing.assert_allclose(outputs[name], model(paddle.to_tensor(ids)).numpy(), rtol=1e-5, atol=1e-6)
    assert programs["sparse"] == programs["dense"]
    np.testing.assert_array_equal(outputs["sparse"], outputs["dense"])


def test_static_nn_sparse_embedding_eagerly_has_a_row_sparse_gradient():
    ids = paddle.to_tensor(np.array([[3], [7], [3]], dtype="int64"))
    out = paddle.static.nn.sparse_embedding(ids, [1_000, 8], param_attr=paddle.ParamAttr(name="feat"))
    assert out.shape == [3, 8]  # lookup_table: ids [N, 1] give [N, dim]
    (table,) = [t for t in _leaves(out) if t.name == "feat"]
    out.sum().backward()
    assert table.grad.rows() == [3, 7, 3] and table.grad.height() == 1_000


def _leaves(out):
    """The parameters a result was computed from (walks the recorded graph)."""
    return [t for t in out._node.inputs if t is not None and t._node is None]


def test_static_nn_sparse_embedding_trains_in_a_static_program():
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            ids = paddle.static.data(name="ids", shape=[None, 1], dtype="int64")
            label = paddle.static.data(name="label", shape=[None, 1], dtype="float32")
            emb = paddle.static.nn.sparse_embedding(ids, [50, 4])
            loss = paddle.mean(paddle.nn.functional.square_error_cost(paddle.static.nn.fc(emb, 1), label))
            paddle.optimizer.Adam(0.1, lazy_mode=True).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed = {"ids": np.array([[1], [9], [42]], "int64"), "label": np.array([[1.0], [-1.0], [0.5]], "float32")}
        losses = [float(exe.run(main, feed=feed, fetch_list=[loss])[0]) for _ in range(5)]
    finally:
        paddle.disable_static()
    assert losses[-1] < losses[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"size": [10]}, "size must be"),
        ({"entry": object()}, "parameter server"),
        ({"table_class": "SSDSparseTable"}, "not available"),
        ({"dtype": "float16"}, "float32 or float64"),
        ({"slot": "a"}, "slot must be"),
        ({"input": paddle.to_tensor([[1]], dtype="int32")}, "int64"),
    ],
)
def test_static_nn_sparse_embedding_refuses_what_it_cannot_do(kwargs, match):
    args = {"input": paddle.to_tensor([[1]], dtype="int64"), "size": [10, 2], **kwargs}
    with pytest.raises(PaddlectlError, match=match):
        paddle.static.nn.sparse_embedding(**args)


def test_data_parallel_over_ranks_refuses_a_sparse_table_naming_the_fix():
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'paddlectl-framework[distributed]'")
    from paddlectl.framework.distributed.comm import Group
    from paddlectl.framework.distributed.env import DistributedError

    two_ranks = Group(object(), [0, 1], 99)  # refused before any message is sent
    with pytest.raises(DistributedError, match="'table' has sparse=True.*sparse=False"):
        paddle.DataParallel(_Tower(sparse=True), group=two_ranks)
    assert paddle.DataParallel(_Tower(sparse=True))._reducer is None  # one process: nothing to reduce
