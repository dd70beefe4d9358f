"""paddle.static's model files and program objects: save/load_inference_model (a saved-model
directory that jit.load and the predictor read too), serialize/deserialize_*, save_to_file /
load_from_file, static.save/load and program state, CompiledProgram/BuildStrategy, Scope, and a
loaded model fine-tuned through jit.load (gradients against the eager layer)."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import static
from paddlectl.framework.errors import CheckpointError, ConfigError, ShapeError


@pytest.fixture
def programs():
    """A fresh main/startup pair in static mode: image [None, 8] -> fc(4, softmax), plus a label."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            image = static.data(name="img", shape=[None, 8], dtype="float32")
            label = static.data(name="label", shape=[None, 1], dtype="int64")
            predict = static.nn.fc(image, 4, activation="softmax")
            loss = paddle.mean(paddle.nn.functional.cross_entropy(predict, label))
            yield main, image, label, predict, loss
    finally:
        paddle.disable_static()


def _feed(n=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 8)).astype("float32"), rng.integers(0, 4, (n, 1)).astype("int64")


def test_inference_model_round_trip(programs, tmp_path):
    main, image, _, predict, _ = programs
    exe = static.Executor(paddle.CPUPlace())
    x, _ = _feed()
    (expected,) = exe.run(main, feed={"img": x}, fetch_list=[predict])
    static.save_inference_model(str(tmp_path / "model"), [image], [predict], exe)
    program, feed_names, fetch_targets = static.load_inference_model(str(tmp_path / "model"), exe)
    assert feed_names == ["img"] and len(fetch_targets) == 1
    (got,) = exe.run(program, feed={feed_names[0]: x}, fetch_list=fetch_targets)
    np.testing.assert_array_equal(got, expected)
    x3, _ = _feed(3, seed=1)  # any batch size: the batch dim stays symbolic
    assert exe.run(program, feed={"img": x3}, fetch_list=fetch_targets)[0].shape == (3, 4)
    # the same directory is a saved model for jit.load and the predictor
    np.testing.assert_array_equal(paddle.jit.load(str(tmp_path / "model"))(x).numpy(), expected)
    predictor = paddle.inference.create_predictor(paddle.inference.Config(str(tmp_path / "model")))
    np.testing.assert_array_equal(predictor.run([x])[0], expected)


def test_inference_model_names_match_paddles(real_paddle, tmp_path):
    """Paddle's own example: the loaded program's feed names and fetch shapes."""
    found = []
    for mod in (paddle, real_paddle):
        mod.enable_static()
        try:
            main, startup = mod.static.Program(), mod.static.Program()
            with mod.static.program_guard(main, startup):
                image = mod.static.data(name="img", shape=[64, 784])
                w = mod.create_parameter(shape=[784, 200], dtype="float32")
                b = mod.create_parameter(shape=[200], dtype="float32")
                out = mod.add(mod.matmul(x=image, y=w), b)
            exe = mod.static.Executor(mod.CPUPlace())
            exe.run(startup)
            prefix = str(tmp_path / mod.__name__ / "infer_model")
            mod.static.save_inference_model(prefix, [image], [out], exe, program=main)
            program, names, targets = mod.static.load_inference_model(prefix, exe)
            x = np.random.default_rng(0).random((64, 784)).astype("float32")
            (result,) = exe.run(program, feed={names[0]: x}, fetch_list=targets)
            found.append((names, result.shape, result.dtype))
        finally:
            mod.disable_static()
    assert found[0] == found[1]


def test_save_inference_model_refuses_what_paddle_refuses(programs, tmp_path):
    main, image, label, predict, loss = programs
    exe = static.Executor()
    with pytest.raises(ConfigError, match="not in feed_vars"):
        static.save_inference_model(str(tmp_path / "m"), [image], [loss], exe)  # loss needs the label
    with pytest.raises(ConfigError):
        static.save_inference_model(str(tmp_path / "m"), [image], [predict], "not an executor")
    with pytest.raises(CheckpointError):
        static.load_inference_model(str(tmp_path / "missing"), exe)


def test_serialized_program_and_persistables(programs, tmp_path):
    main, image, _, predict, _ = programs
    exe = static.Executor()
    x, _ = _feed()
    (expected,) = exe.run(main, feed={"img": x}, fetch_list=[predict])
    text = static.serialize_program([image], [predict])
    blob = static.serialize_persistables([image], [predict], exe)
    static.save_to_file(str(tmp_path / "model.params"), blob)
    assert static.load_from_file(str(tmp_path / "model.params")) == blob
    program = static.deserialize_program(text)
    with pytest.raises(ConfigError, match="deserialize_persistables"):
        exe.run(program, feed={"img": x}, fetch_list=[0])  # no weights yet
    static.deserialize_persistables(program, blob, exe)
    np.testing.assert_array_equal(exe.run(program, feed={"img": x}, fetch_list=program.fetch_targets)[0], expected)
    normalized = static.normalize_program(main, [image], [predict])
    np.testing.assert_array_equal(exe.run(normalized, feed={"img": x}, fetch_list=[0])[0], expected)
    with pytest.raises(CheckpointError):
        static.deserialize_persistables(program, b"not safetensors", exe)


def test_deserialize_persistables_sets_a_recording_programs_parameters(programs):
    main, image, _, predict, _ = programs
    exe = static.Executor()
    blob = static.serialize_persistables([image], [predict], exe)
    params = main.all_parameters()
    saved = [p.numpy().copy() for p in params]
    for p in params:
        p.set_value(np.zeros(p.shape, p.dtype))
    static.deserialize_persistables(main, blob, exe)
    for p, value in zip(params, saved, strict=True):
        np.testing.assert_array_equal(p.numpy(), value)


def test_static_save_and_load_restore_parameters_and_optimizer_state(programs, tmp_path):
    main, _, _, _, loss = programs
    paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
    exe = static.Executor()
    x, y = _feed()
    for _ in range(2):
        exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss])
    static.save(main, str(tmp_path / "ckpt"))
    assert (tmp_path / "ckpt.pdparams").is_file() and (tmp_path / "ckpt.pdopt").is_file()
    (after_save,) = exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss])  # a third step
    static.load(main, str(tmp_path / "ckpt"))
    (again,) = exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss])  # the third step again
    np.testing.assert_allclose(again, after_save, rtol=1e-6)
    state = static.load_program_state(str(tmp_path / "ckpt"))
    assert sorted(state) == sorted(p.name for p in main.all_parameters())
    bad = {name: np.zeros([1]) for name in state}
    with pytest.raises(ShapeError):
        static.set_program_state(main, bad)


def test_compiled_program_runs_like_its_program(programs):
    main, _, _, _, loss = programs
    paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    strategy = static.BuildStrategy()
    strategy.memory_optimize = True
    strategy.reduce_strategy = static.BuildStrategy.ReduceStrategy.Reduce
    compiled = static.CompiledProgram(main, build_strategy=strategy)
    exe = static.Executor()
    x, y = _feed()
    losses = [exe.run(compiled, feed={"img": x, "label": y}, fetch_list=[loss.name])[0] for _ in range(3)]
    assert losses[2] < losses[0]  # each run is a training step of the wrapped program
    with pytest.raises(ConfigError):
        strategy.fuse_adamw = "yes"
    with pytest.raises(AttributeError):
        strategy.no_such_option = True
    with pytest.raises(ConfigError):
        static.CompiledProgram("main")


def test_scope_holds_variables_and_finds_parameters(programs):
    main, *_ = programs
    static.global_scope().var("data").get_tensor().set(np.ones((2, 2)), paddle.CPUPlace())
    np.testing.assert_array_equal(np.array(static.global_scope().find_var("data").get_tensor()), np.ones((2, 2)))
    scope = static.Scope()
    with static.scope_guard(scope):
        static.global_scope().var("x").get_tensor().set(np.zeros(3))
    assert scope.find_var("x") is not None and static.global_scope().find_var("x") is None
    weight = main.all_parameters()[0]
    with static.program_guard(main):
        found = static.global_scope().find_var(weight.name)
        found.get_tensor().set(np.full(weight.shape, 0.5, "float32"))
    np.testing.assert_array_equal(weight.numpy(), np.full(weight.shape, 0.5, "float32"))


def test_cpu_places_follow_cpu_num(monkeypatch):
    monkeypatch.delenv("CPU_NUM", raising=False)
    assert len(static.cpu_places()) == 1
    monkeypatch.setenv("CPU_NUM", "3")
    assert len(static.cpu_places()) == 3
    with pytest.raises(ConfigError):
        static.cpu_places(0)


def test_a_loaded_model_fine_tunes_with_the_eager_layers_gradients(tmp_path):
    """jit.load in train mode replays the program through dispatch: the same loss gives the
    same parameter gradients as the eager layer it was saved from, and eval mode sees the update."""
    paddle.seed(3)
    layer = paddle.nn.Sequential(paddle.nn.Linear(6, 5), paddle.nn.Tanh(), paddle.nn.Linear(5, 3))
    paddle.jit.save(layer, str(tmp_path / "m"), input_spec=[paddle.static.InputSpec([None, 6], "float32", "x")])
    loaded = paddle.jit.load(str(tmp_path / "m"))
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 6)).astype("float32"))
    loaded.train()
    (loaded(x) ** 2).sum().backward()
    (layer(x) ** 2).sum().backward()
    eager = {p.numpy().tobytes(): p.grad.numpy() for p in layer.parameters()}
    for p in loaded.parameters():
        np.testing.assert_allclose(p.grad.numpy(), eager[p.numpy().tobytes()], rtol=1e-6)
    before = loaded.eval()(x).numpy()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=loaded.parameters())
    loaded.train()
    opt.step()
    assert not np.allclose(loaded.eval()(x).numpy(), before)


def test_a_static_dataloader_feeds_the_executor(programs):
    """feed_list with return_list=False: each batch is [{feed name: field}], which Executor.run takes."""
    main, image, label, _, loss = programs
    x, y = _feed(8)

    class Pairs(paddle.io.Dataset):
        def __getitem__(self, i):
            return x[i], y[i]

        def __len__(self):
            return len(x)

    loader = paddle.io.DataLoader(Pairs(), feed_list=[image, label], batch_size=4, return_list=False)
    batches = list(loader())
    assert len(batches) == 2 and list(batches[0][0]) == ["img", "label"]
    exe = static.Executor()
    (first,) = exe.run(main, feed=batches[0], fetch_list=[loss])
    (direct,) = exe.run(main, feed={"img": x[:4], "label": y[:4]}, fetch_list=[loss])
    np.testing.assert_array_equal(first, direct)
    with pytest.raises(ConfigError):
        exe.run(main, feed=batches[0] * 2, fetch_list=[loss])  # two places: one CPU here


def test_exponential_moving_average_applies_bias_corrected_averages(programs):
    main, _, _, _, loss = programs
    paddle.optimizer.SGD(learning_rate=0.5).minimize(loss)
    ema = static.ExponentialMovingAverage(0.9)
    ema.update()
    exe = static.Executor()
    x, y = _feed()
    weight = main.all_parameters()[0]
    average = np.zeros(weight.shape)
    for _ in range(4):
        exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss])
        average = 0.9 * average + 0.1 * weight.numpy()
    trained = weight.numpy().copy()
    with ema.apply(exe):
        np.testing.assert_allclose(weight.numpy(), average / (1 - 0.9**4), rtol=1e-5)
    np.testing.assert_array_equal(weight.numpy(), trained)  # restored after the block
    with pytest.raises(ConfigError):
        ema.restore(exe)  # nothing applied
    paddle.disable_static()
    with pytest.raises(ConfigError):
        static.ExponentialMovingAverage(0.9)  # static mode only, as in Paddle


def test_program_variables_state_dict_and_saving_a_scope_tensor(programs, tmp_path):
    """Paddle's paddle.load example: a parameter found through list_vars and the scope, saved."""
    main, image, _, predict, loss = programs
    paddle.optimizer.Adam(learning_rate=0.1).minimize(loss)
    names = [v.name for v in main.list_vars()]
    weight = main.all_parameters()[0]
    assert names[:2] == ["img", "label"] and weight.name in names and predict.name in names
    view = static.global_scope().find_var(weight.name).get_tensor()
    paddle.save(view, str(tmp_path / "w.pdtensor"))
    np.testing.assert_array_equal(paddle.load(str(tmp_path / "w.pdtensor")), weight.numpy())
    assert sorted(main.state_dict("param")) == sorted(p.name for p in main.all_parameters())
    x, y = _feed()
    static.Executor().run(main, feed={"img": x, "label": y}, fetch_list=[loss])
    assert any("moment1" in k for k in main.state_dict("opt"))
    assert set(main.state_dict("all")) == set(main.state_dict("param")) | set(main.state_dict("opt"))
    with pytest.raises(ConfigError):
        main.state_dict("weights")


def test_static_spectral_norm_runs_paddles_power_iteration():
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            weight = static.data(name="weight", shape=[2, 8, 3, 3], dtype="float32")
            out = static.nn.spectral_norm(weight=weight, dim=1, power_iters=2)
        w = np.random.default_rng(11).standard_normal((2, 8, 3, 3)).astype("float32")
        (got,) = static.Executor().run(main, feed={"weight": w}, fetch_list=[out])
    finally:
        paddle.disable_static()
    (u,) = (p.numpy().astype("float64") for p in main.all_parameters())  # v's start is never read: v = W^T u first
    matrix = np.moveaxis(w, 1, 0).reshape(8, -1).astype("float64")
    for _ in range(2):
        v = matrix.T @ u
        v /= np.linalg.norm(v) + 1e-12
        u = matrix @ v
        u /= np.linalg.norm(u) + 1e-12
    np.testing.assert_allclose(got, w / (u @ matrix @ v), rtol=1e-5)
