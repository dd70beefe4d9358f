"""Training parity: one script, run with paddlectl and with real PaddlePaddle, gives the same losses."""

import numpy as np
import pytest
from PIL import Image

import paddlectl.framework as ours

STEPS, BATCH = 50, 32


@pytest.fixture(scope="module")
def digits():
    sklearn_datasets = pytest.importorskip("sklearn.datasets", reason="scikit-learn provides the real digits data")
    data = sklearn_datasets.load_digits()
    images = np.stack(
        [
            np.asarray(Image.fromarray((img / 16.0).astype("float32"), mode="F").resize((28, 28), Image.BILINEAR))
            for img in data.images
        ]
    )
    return images[:, None].astype("float32"), data.target.astype("int64")[:, None]


def train_digits(paddle, images, labels, init_state, optimizer: str) -> list[float]:
    """An ordinary Paddle training script: only the module passed as ``paddle`` differs."""
    model = paddle.vision.models.LeNet()
    model.set_state_dict({k: paddle.to_tensor(v) for k, v in init_state.items()})
    scheduler = None
    if optimizer == "adam":
        opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    else:
        scheduler = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=0.05, T_max=STEPS)
        opt = paddle.optimizer.Momentum(learning_rate=scheduler, momentum=0.9, parameters=model.parameters())
    loss_fn = paddle.nn.CrossEntropyLoss()
    losses = []
    for step in range(STEPS):
        start = (step * BATCH) % (len(images) - BATCH)
        x = paddle.to_tensor(images[start : start + BATCH])
        y = paddle.to_tensor(labels[start : start + BATCH])
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        if scheduler is not None:
            scheduler.step()
        losses.append(float(loss))
    return losses


@pytest.mark.parametrize("optimizer", ["adam", "momentum_cosine"])
def test_lenet_on_digits_matches_paddlepaddle(real_paddle, digits, optimizer):
    images, labels = digits
    ours.seed(0)
    init = {k: v.numpy().copy() for k, v in ours.vision.models.LeNet().state_dict().items()}
    mine = train_digits(ours, images, labels, init, optimizer)
    theirs = train_digits(real_paddle, images, labels, init, optimizer)
    np.testing.assert_allclose(mine, theirs, rtol=1e-4)
    assert mine[-1] < mine[0] * 0.75, "the loss must actually fall over 50 steps"
