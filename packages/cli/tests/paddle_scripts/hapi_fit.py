"""Paddle's high-level API as its guides show it: a Sequential network wrapped in paddle.Model,
prepare(optimizer, loss, metrics), fit, evaluate and predict, on generated two-class data."""

import numpy as np
import paddle
from paddle.io import TensorDataset
from paddle.static import InputSpec


def two_blobs(num_samples, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=(num_samples, 1))
    points = rng.normal(0.0, 0.5, size=(num_samples, 4)) + np.where(labels == 1, 1.5, -1.5)
    return paddle.to_tensor(points.astype("float32")), paddle.to_tensor(labels.astype("int64"))


paddle.seed(11)
network = paddle.nn.Sequential(
    paddle.nn.Linear(4, 16),
    paddle.nn.ReLU(),
    paddle.nn.Dropout(0.1),
    paddle.nn.Linear(16, 2),
)
model = paddle.Model(
    network, inputs=InputSpec([None, 4], "float32", "x"), labels=InputSpec([None, 1], "int64", "label")
)
model.prepare(
    optimizer=paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters()),
    loss=paddle.nn.CrossEntropyLoss(),
    metrics=paddle.metric.Accuracy(),
)
train_data = TensorDataset(list(two_blobs(200, seed=0)))
test_data = TensorDataset(list(two_blobs(100, seed=1)))
model.fit(train_data, epochs=3, batch_size=20, verbose=0)
result = model.evaluate(test_data, batch_size=50, verbose=0)
print("eval acc", result["acc"])
predictions = model.predict(test_data, batch_size=50, stack_outputs=True, verbose=0)
print("predict shape", predictions[0].shape)
