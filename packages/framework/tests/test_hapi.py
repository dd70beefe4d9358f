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
    assert result["acc"] > 0.9 and result["loss"] < 0.5
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
