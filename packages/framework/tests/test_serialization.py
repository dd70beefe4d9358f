"""paddle.save/paddle.load: round trips, real PaddlePaddle files, and refusal of bad or hostile files."""

from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import CheckpointError
from paddlectl.framework.serialization.checkpoint import MAGIC


def _nested():
    return {
        "w": paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3)),
        "ints": np.arange(4, dtype="int64"),
        "empty": paddle.zeros([0, 3]),
        "half": np.ones(3, dtype="float16"),
        "mask": np.array([True, False]),
        "scalar": np.float32(2.5),
        "nested": [1, 2.5, float("inf"), None, "text", b"\x00raw", (paddle.ones([1]), True)],
        7: {"inner": np.eye(2)[:, ::-1]},  # non-contiguous, int key
    }


def _assert_same(got, want):
    if isinstance(want, paddle.Tensor):
        assert isinstance(got, paddle.Tensor)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    elif isinstance(want, np.ndarray | np.generic):
        assert type(got) is type(want) and got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            _assert_same(got[key], want[key])
    elif isinstance(want, list | tuple):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
    else:
        assert type(got) is type(want) and got == want


def test_round_trip_keeps_structure_types_and_values(tmp_path):
    obj = _nested()
    paddle.save(obj, tmp_path / "x.pdparams")
    _assert_same(paddle.load(tmp_path / "x.pdparams"), obj)


def test_return_numpy_gives_ndarrays(tmp_path):
    paddle.save({"w": paddle.ones([2]), "l": [paddle.zeros([1])]}, str(tmp_path / "x.pdparams"))
    got = paddle.load(str(tmp_path / "x.pdparams"), return_numpy=True)
    assert isinstance(got["w"], np.ndarray) and isinstance(got["l"][0], np.ndarray)
    np.testing.assert_array_equal(got["w"], np.ones(2, "float32"))


def test_layer_and_optimizer_state_dicts_round_trip(tmp_path):
    paddle.seed(3)
    layer = paddle.nn.Linear(4, 3)
    state = layer.state_dict()
    paddle.save(state, tmp_path / "m.pdparams")
    other = paddle.nn.Linear(4, 3)
    other.set_state_dict(paddle.load(tmp_path / "m.pdparams"))
    for name, value in state.items():
        np.testing.assert_array_equal(other.state_dict()[name].numpy(), value.numpy())
    opt_state = {"moment1": {"w": np.ones((4, 3), "float32")}, "LR_Scheduler": {"last_epoch": 3, "last_lr": 0.01}}
    paddle.save(opt_state, tmp_path / "m.pdopt")
    _assert_same(paddle.load(tmp_path / "m.pdopt"), opt_state)


def test_file_objects_work():
    buffer = io.BytesIO()
    paddle.save({"a": np.arange(3)}, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(paddle.load(buffer)["a"], np.arange(3))


def test_loaded_arrays_are_writable(tmp_path):
    paddle.save({"w": paddle.ones([2])}, tmp_path / "x")
    loaded = paddle.load(tmp_path / "x")["w"]
    loaded.numpy()[0] = 5.0
    assert loaded.numpy()[0] == 5.0


def test_unsavable_values_raise_typeerror_naming_where(tmp_path):
    with pytest.raises(TypeError, match=r"obj\['bad'\]\[1\] is a object"):
        paddle.save({"bad": [1, object()]}, tmp_path / "x")
    with pytest.raises(TypeError, match="dtype <U1"):
        paddle.save({"s": np.array(["a"])}, tmp_path / "x")
    with pytest.raises(ValueError, match="protocol"):
        paddle.save({}, tmp_path / "x", protocol=1)
    assert not (tmp_path / "x").exists()


def test_failed_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "x.pdparams"
    paddle.save({"a": 1}, path)
    with pytest.raises(TypeError):
        paddle.save({"a": object()}, path)
    assert paddle.load(path) == {"a": 1}
    assert os.listdir(tmp_path) == ["x.pdparams"]


# ----- refusal of damaged files -------------------------------------------------------------------


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.pdparams"
    paddle.save({"w": paddle.to_tensor(np.arange(64, dtype="float32")), "step": 3}, path)
    return path


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(CheckpointError, match="nope.pdparams: no such file"):
        paddle.load(tmp_path / "nope.pdparams")


@pytest.mark.parametrize("keep", [0, 5, len(MAGIC) + 4, 60, -1])
def test_truncated_file_is_refused(saved, keep):
    data = saved.read_bytes()
    saved.write_bytes(data[: keep if keep >= 0 else len(data) - 1])
    with pytest.raises(CheckpointError, match=r"model\.pdparams.*(truncated|neither)"):
        paddle.load(saved)


def test_flipped_payload_byte_fails_the_checksum(saved):
    data = bytearray(saved.read_bytes())
    data[-10] ^= 0xFF
    saved.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="model.pdparams.*SHA-256 does not match"):
        paddle.load(saved)


def test_tampered_structure_fails_the_checksum(saved):
    data = saved.read_bytes()
    tampered = data.replace(b'\\"v\\": 3', b'\\"v\\": 4')
    assert tampered != data
    saved.write_bytes(tampered)
    with pytest.raises(CheckpointError, match="SHA-256 does not match"):
        paddle.load(saved)


def test_appended_bytes_are_refused(saved):
    saved.write_bytes(saved.read_bytes() + b"extra")
    with pytest.raises(CheckpointError, match="appended"):
        paddle.load(saved)


def test_garbled_header_and_unknown_version_are_refused(saved):
    data = saved.read_bytes()
    saved.write_bytes(data.replace(b'"version": 1', b'"version": 9'))
    with pytest.raises(CheckpointError, match="format version 9"):
        paddle.load(saved)
    saved.write_bytes(data.replace(b'{"format"', b'{"formaX'))
    with pytest.raises(CheckpointError, match="header is not the JSON"):
        paddle.load(saved)


def test_other_files_are_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(CheckpointError, match="notes.txt is neither"):
        paddle.load(path)
    with pytest.raises(CheckpointError, match="is a directory"):
        paddle.load(tmp_path)


# ----- real PaddlePaddle pickles -------------------------------------------------------------------


def test_reads_real_paddle_linear_and_adam_state(real_paddle, tmp_path):
    real_paddle.seed(5)
    layer = real_paddle.nn.Linear(4, 3)
    opt = real_paddle.optimizer.Adam(learning_rate=0.01, parameters=layer.parameters())
    layer(real_paddle.randn([2, 4])).sum().backward()
    opt.step()
    real_paddle.save(layer.state_dict(), str(tmp_path / "m.pdparams"))
    real_paddle.save(opt.state_dict(), str(tmp_path / "m.pdopt"))

    params = paddle.load(tmp_path / "m.pdparams")
    assert list(params) == ["weight", "bias"]
    for key, value in layer.state_dict().items():
        assert isinstance(params[key], paddle.Tensor)
        np.testing.assert_array_equal(params[key].numpy(), value.numpy())
    ours = paddle.nn.Linear(4, 3)
    ours.set_state_dict(params)
    np.testing.assert_array_equal(ours.weight.numpy(), layer.weight.numpy())

    opt_state = paddle.load(tmp_path / "m.pdopt")
    want = opt.state_dict()
    assert set(opt_state) == set(want)
    for key, value in want.items():
        if isinstance(value, real_paddle.Tensor):
            np.testing.assert_array_equal(opt_state[key].numpy(), value.numpy())
    as_numpy = paddle.load(tmp_path / "m.pdopt", return_numpy=True)
    assert all(isinstance(v, np.ndarray) for k, v in as_numpy.items() if isinstance(want[k], real_paddle.Tensor))


def test_reads_real_paddle_nested_objects(real_paddle, tmp_path):
    obj = {"t": real_paddle.ones([2]), "n": np.arange(3), "i": 3, "l": [real_paddle.zeros([1]), "s"]}
    real_paddle.save(obj, str(tmp_path / "o.pd"), protocol=2)
    got = paddle.load(tmp_path / "o.pd")
    want = real_paddle.load(str(tmp_path / "o.pd"))
    assert isinstance(got["t"], paddle.Tensor) and isinstance(got["n"], np.ndarray)
    np.testing.assert_array_equal(got["t"].numpy(), want["t"].numpy())
    np.testing.assert_array_equal(got["l"][0].numpy(), want["l"][0].numpy())
    assert got["i"] == 3 and got["l"][1] == "s"


class _Evil:
    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __reduce__(self):
        return (os.system, (f"touch {self.sentinel}",))


@pytest.mark.parametrize("protocol", [2, 4])
def test_malicious_pickle_is_refused_without_running_it(tmp_path, protocol):
    sentinel = tmp_path / "pwned"
    path = tmp_path / "evil.pdparams"
    path.write_bytes(pickle.dumps({"weight": np.ones(2), "x": _Evil(sentinel)}, protocol=protocol))
    with pytest.raises(CheckpointError, match=r"evil\.pdparams.*(posix|os)\.system.*refused"):
        paddle.load(path)
    assert not sentinel.exists()


def test_pickled_arbitrary_class_is_refused(tmp_path):
    path = tmp_path / "cls.pdparams"
    path.write_bytes(pickle.dumps({"a": io.BytesIO}))
    with pytest.raises(CheckpointError, match=r"_io\.BytesIO.*refused"):
        paddle.load(path)


def test_truncated_pickle_is_refused(tmp_path):
    path = tmp_path / "cut.pdparams"
    path.write_bytes(pickle.dumps({"w": np.ones(50)}, protocol=4)[:-20])
    with pytest.raises(CheckpointError, match="cut.pdparams is a damaged or truncated pickle"):
        paddle.load(path)
