"""DataParallel training of a small MLP on a fixed global batch: rank r takes rows r::world of each
batch; prints the global loss of each step (the mean over ranks) as JSON on rank 0.

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
paddle.seed(7 + rank)  # different initial weights per rank: DataParallel must broadcast rank 0's
model = paddle.nn.Sequential(
    paddle.nn.Linear(6, 32), paddle.nn.Tanh(), paddle.nn.Linear(32, 16), paddle.nn.Tanh(), paddle.nn.Linear(16, 3)
)
if rank == 0:
    paddle.seed(7)
    reference = paddle.nn.Sequential(
        paddle.nn.Linear(6, 32), paddle.nn.Tanh(), paddle.nn.Linear(32, 16), paddle.nn.Tanh(), paddle.nn.Linear(16, 3)
    )
    model.set_state_dict(reference.state_dict())
dp = paddle.DataParallel(model, comm_buffer_size=comm_mb, last_comm_buffer_size=last_mb)
opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=dp.parameters())
data = np.random.default_rng(0)
losses = []
for _ in range(steps):
    x = data.normal(size=(12, 6)).astype("float32")
    y = data.integers(0, 3, size=(12,))
    out = dp(paddle.to_tensor(x[rank::world]))
    loss = paddle.nn.functional.cross_entropy(out, paddle.to_tensor(y[rank::world]))
    loss.backward()
    opt.step()
    opt.clear_grad()
    dist.all_reduce(loss, dist.ReduceOp.AVG)
    losses.append(float(loss))
if rank == 0:
    print(json.dumps({"losses": losses, "buckets": len(dp._reducer.buckets) if dp._reducer else 0}))
