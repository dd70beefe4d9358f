import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.io import Dataset


class Digits(Dataset):
    def __init__(self, split: str) -> None:
        datasets = pytest.importorskip("sklearn.datasets")
        data = datasets.load_digits()
        x = (data.data / 16.0).astype("float32")
        y = data.target.astype("int64")[:, None]
        cut = 1400
        self.x, self.y = (x[:cut], y[:cut]) if split == "train" else (x[cut:], y[cut:])

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def _model(lr=0.01):
    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Linear(64, 64), paddle.nn.ReLU(), paddle.nn.Linear(64, 10))
    model = paddle.Model(net)
    opt = paddle.optimizer.Adam(learning_rate=lr, parameters=net.parameters())
    model.prepare(opt, paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model


def test_fit_evaluate_predict_save_load(tmp_path):
    model = _model()
    model.fit(Digits("train"), Digits("test"), batch_size=32, epochs=6, verbose=0, save_dir=str(tmp_path / "ckpt"))
    result = model.evaluate(Digits("test"), batch_size=128, verbose=0)
    assert result["acc"] > 0.88 and result["loss"] < 0.5  # 0.899: Paddle's own initial weights for seed 0
    (logits,) = model.predict(Digits("test"), batch_size=100, stack_outputs=True, verbose=0)
    assert logits.shape == (len(Digits("test")), 10)
    assert (tmp_path / "ckpt" / "final.pdparams").exists() and (tmp_path / "ckpt" / "0.pdopt").exists()
    fresh = _model()
    fresh.load(str(tmp_path / "ckpt" / "final"))
    (again,) = fresh.predict(Digits("test"), batch_size=100, stack_outputs=True, verbose=0)
    np.testing.assert_allclose(again, logits, rtol=1e-6)


def test_early_stopping_and_lr_scheduler_callbacks():
    model = _model(lr=0.0)  # nothing improves, so early stopping must end training early
    scheduler = paddle.optimizer.lr.StepDecay(learning_rate=0.1, step_size=1, gamma=0.5)
    model._optimizer = paddle.optimizer.SGD(learning_rate=scheduler, parameters=model.parameters())
    epochs_seen = []

    class Recorder(paddle.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            epochs_seen.append(epoch)

    stop = paddle.callbacks.EarlyStopping(monitor="acc", patience=0, save_best_model=False)
    model.fit(
        Digits("train"), Digits("test"), batch_size=700, epochs=10, verbose=0,
        callbacks=[stop, paddle.callbacks.LRScheduler(by_step=False, by_epoch=True), Recorder()],
    )  # fmt: skip
    assert len(epochs_seen) < 10
    assert scheduler.last_lr == pytest.approx(0.1 * 0.5 ** len(epochs_seen))


def test_misuse_is_explained():
    net = paddle.nn.Linear(2, 2)
    model = paddle.Model(net)
    with pytest.raises(RuntimeError, match="prepare"):
        model.fit(Digits("train"), verbose=0)
    with pytest.raises(TypeError, match="Metric"):
        model.prepare(None, paddle.nn.MSELoss(), metrics=["acc"])
    with pytest.raises(ValueError, match="exactly one"):
        paddle.callbacks.LRScheduler(by_step=True, by_epoch=True)


def test_progress_bar_reports_epochs_and_loss(capsys):
    model = _model()
    model.fit(Digits("test"), batch_size=100, epochs=2, verbose=2, log_freq=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "loss:" in out and "acc:" in out


FLOP_CASES = {
    # conv 2*8*16*20 outputs * (3*9 + 1 bias); batch norm 2 per element; leaky relu 1 per element
    "conv_bn_leaky": (
        lambda nn: nn.Sequential(nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.LeakyReLU(0.1)),
        [2, 3, 16, 20],
        5120 * 28 + 2 * 5120 + 5120,
    ),
    # [2, 8, 7, 9] outputs * (8 / 4 groups * 9), no bias
    "grouped_conv": (lambda nn: nn.Conv2D(8, 8, 3, stride=2, groups=4, bias_attr=False), [2, 8, 16, 20], 1008 * 18),
    # [2, 4, 10, 14] outputs * (8 / 2 groups * 2*2 + 1)
    "conv_transpose": (lambda nn: nn.Conv2DTranspose(8, 4, 2, stride=2, groups=2), [2, 8, 5, 7], 1120 * 17),
    # plain average pooling counts zero; the adaptive pool's [4, 3] window: (12 + 1) per output
    "pools": (lambda nn: nn.Sequential(nn.AvgPool2D(2), nn.AdaptiveAvgPool2D((2, 3))), [2, 4, 16, 18], 48 * 13),
    # conv1d [2, 6, 10] * (4*3 + 1); adaptive pool of 10 to 2: (5 + 1) per output
    "conv1d": (lambda nn: nn.Sequential(nn.Conv1D(4, 6, 3), nn.AdaptiveAvgPool1D(2)), [2, 4, 12], 120 * 13 + 24 * 6),
    # BatchNorm1D is not in Paddle's table (zero); a Linear counts in_features per output, not its bias
    "bn1d_linear": (lambda nn: nn.Sequential(nn.BatchNorm1D(6), nn.Linear(6, 5), nn.ReLU()), [3, 6], 6 * 15),
}


@pytest.mark.parametrize("name", sorted(FLOP_CASES))
def test_flops_count_each_layers_ops_by_their_records(name):
    """Paddle's rules (``paddle.hapi.dynamic_flops``; the installed Paddle's own ``flops`` fails on
    NumPy 2), read from the op records; a training-mode BatchNorm counts too."""
    make, size, expected = FLOP_CASES[name]
    net = make(paddle.nn)
    assert paddle.flops(net, size) == expected
    assert all(layer.training for layer in net.sublayers(include_self=True))  # counted in eval, handed back as it was


def test_program_flops_reads_the_records_at_bound_sizes():
    from paddlectl.framework.core.op import REGISTRY
    from paddlectl.framework.hapi.flop_counts import program_flops
    from paddlectl.framework.jit import InputSpec
    from paddlectl.framework.static.input_spec import signatures
    from paddlectl.framework.static.trace import trace

    assert all(REGISTRY[n].flops is not None for n in ("conv2d", "conv2d_transpose", "matmul", "batch_norm"))
    layer = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3, padding=1), paddle.nn.Flatten(), paddle.nn.Linear(4 * 36, 2))
    layer.eval()
    program, _ = trace(layer, signatures([InputSpec([None, 3, 6, 6], "float32", "x")]), layer=layer)
    per_image = 4 * 36 * (3 * 9 + 1) + 4 * 36 * 2
    assert program_flops(program, {"N": 5}) == 5 * per_image == paddle.flops(layer, [5, 3, 6, 6])
