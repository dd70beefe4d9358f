"""Fit y = 2*x0 - 3*x1 + 0.5 with a small network, in the style of Paddle's quick start:
a paddle.io.Dataset, a DataLoader, a training loop, then paddle.save/paddle.load of the
state_dict into a fresh model. Usage: train_regression.py OUTPUT_DIR [--epochs N]."""

import argparse
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn
from paddle.io import DataLoader, Dataset


class RandomLinearDataset(Dataset):
    def __init__(self, num_samples):
        super().__init__()
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((num_samples, 2)).astype("float32")
        self.y = (self.x @ np.array([[2.0], [-3.0]], dtype="float32") + 0.5).astype("float32")

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]

    def __len__(self):
        return len(self.x)


class Regressor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output_dir")
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()

    paddle.seed(2024)
    loader = DataLoader(RandomLinearDataset(256), batch_size=32, shuffle=True, drop_last=True)
    model = Regressor()
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    loss_fn = nn.MSELoss()

    model.train()
    for epoch in range(args.epochs):
        for x, y in loader():
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
        print(f"epoch {epoch} loss {float(loss):.5f}")

    os.makedirs(args.output_dir, exist_ok=True)
    params_path = os.path.join(args.output_dir, "regressor.pdparams")
    paddle.save(model.state_dict(), params_path)
    paddle.save(opt.state_dict(), os.path.join(args.output_dir, "regressor.pdopt"))

    restored = Regressor()
    restored.set_state_dict(paddle.load(params_path))
    model.eval()
    restored.eval()
    x = paddle.to_tensor([[1.0, 1.0], [0.0, -1.0]])
    with paddle.no_grad():
        same = paddle.allclose(model(x), restored(x)).item()
        prediction = restored(x).numpy().ravel()
    print("restored matches:", same)
    print("prediction:", " ".join(f"{v:.3f}" for v in prediction))


if __name__ == "__main__":
    main()
