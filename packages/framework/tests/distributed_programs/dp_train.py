"""DataParallel training of a small MLP on a fixed global batch (rank r takes rows r::world) next
to, on rank 0, the same model trained alone on the whole batch; prints 'RESULT <json>' with both
loss curves. Ranks start from different weights: DataParallel must broadcast rank 0's.

argv: steps, comm_buffer_size (MB), last_comm_buffer_size (MB)
"""

import json
import sys

import numpy as np

import paddlectl.framework as paddle
import paddlectl.framework.distributed as dist

steps, comm_mb, last_mb = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()


def mlp(seed):
    paddle.seed(seed)
    return paddle.nn.Sequential(
        paddle.nn.Linear(6, 32), paddle.nn.Tanh(), paddle.nn.Linear(32, 16), paddle.nn.Tanh(), paddle.nn.Linear(16, 3)
    )


def train(model, rows):
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    data = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x = data.normal(size=(12, 6)).astype("float32")
        y = data.integers(0, 3, size=(12,))
        loss = paddle.nn.functional.cross_entropy(model(paddle.to_tensor(x[rows])), paddle.to_tensor(y[rows]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        if isinstance(model, paddle.DataParallel):
            dist.all_reduce(loss, dist.ReduceOp.AVG)
        losses.append(float(loss))
    return losses


dp = paddle.DataParallel(mlp(7 + rank), comm_buffer_size=comm_mb, last_comm_buffer_size=last_mb)
parallel = train(dp, slice(rank, None, world))
if rank == 0:
    alone = train(mlp(7), slice(None))
    print("RESULT " + json.dumps({"parallel": parallel, "alone": alone, "buckets": len(dp._reducer.buckets)}))
