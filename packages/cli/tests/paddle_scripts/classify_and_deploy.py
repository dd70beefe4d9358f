"""Train a small CNN on generated 8x8 images of four patterns, then deploy it the way Paddle's
guides do: paddle.jit.save with an InputSpec, paddle.jit.load, and a paddle.inference predictor.
The test set is read by a worker process. Usage: classify_and_deploy.py OUTPUT_DIR."""

import os
import sys

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import inference, nn
from paddle.static import InputSpec

NUM_CLASSES = 4


def make_images(num_samples, rng):
    """Class k is a bright bar at rows 2k..2k+1 on a noisy background."""
    labels = rng.integers(0, NUM_CLASSES, size=num_samples)
    images = rng.normal(0.0, 0.3, size=(num_samples, 1, 8, 8)).astype("float32")
    for i, k in enumerate(labels):
        images[i, 0, 2 * k : 2 * k + 2, :] += 1.0
    return images, labels.astype("int64")


class PatternDataset(paddle.io.Dataset):
    def __init__(self, num_samples, seed):
        super().__init__()
        self.images, self.labels = make_images(num_samples, np.random.default_rng(seed))

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]

    def __len__(self):
        return len(self.labels)


class SmallCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(1, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2D(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8 * 4 * 4, NUM_CLASSES)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(F.relu(self.conv(x)))))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with paddle.no_grad():
        for images, labels in loader:
            predicted = paddle.argmax(model(images), axis=1)
            correct += int((predicted == labels).astype("int64").sum())
            total += labels.shape[0]
    return correct / total


def main(output_dir):
    paddle.seed(7)
    train_loader = paddle.io.DataLoader(PatternDataset(512, seed=1), batch_size=64, shuffle=True)
    test_loader = paddle.io.DataLoader(PatternDataset(128, seed=2), batch_size=64, num_workers=1)
    model = SmallCNN()
    opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=model.parameters())
    for epoch in range(3):
        model.train()
        for images, labels in train_loader:
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
        print(f"epoch {epoch} loss {loss.item():.4f} test accuracy {evaluate(model, test_loader):.3f}")

    path = os.path.join(output_dir, "inference", "small_cnn")
    paddle.jit.save(model, path, input_spec=[InputSpec(shape=[None, 1, 8, 8], dtype="float32", name="image")])

    images, labels = make_images(16, np.random.default_rng(3))
    eager = model(paddle.to_tensor(images)).numpy()
    loaded = paddle.jit.load(path)
    loaded.eval()
    jit_out = loaded(paddle.to_tensor(images)).numpy()

    config = inference.Config(path)
    predictor = inference.create_predictor(config)
    input_handle = predictor.get_input_handle(predictor.get_input_names()[0])
    input_handle.reshape(list(images.shape))
    input_handle.copy_from_cpu(images)
    predictor.run()
    served = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()

    print(f"jit.load max diff {np.abs(jit_out - eager).max():.2e}")
    print(f"predictor max diff {np.abs(served - eager).max():.2e}")
    print(f"predictor accuracy {(served.argmax(axis=1) == labels).mean():.3f}")
    return 0 if np.allclose(served, eager, atol=1e-4) else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
