"""The same MLP trained by plain DataParallel, sharding stage 1 and stage 2 (fleet), from the same
weights on the same data; prints, on rank 0, each run's losses and per-rank memory as JSON."""

import json

import numpy as np

import paddlectl.framework as paddle
import paddlectl.framework.distributed as dist
from paddlectl.framework.distributed import fleet


def run(sharding: bool, stage: int) -> dict:
    strategy = fleet.DistributedStrategy()
    strategy.sharding = sharding
    strategy.sharding_configs = {"stage": stage}
    fleet.init(is_collective=True, strategy=strategy)
    paddle.seed(3)
    model = paddle.nn.Sequential(*[paddle.nn.Linear(16, 16) for _ in range(6)], paddle.nn.Linear(16, 2))
    clip = paddle.nn.ClipGradByGlobalNorm(0.5)
    model = fleet.distributed_model(model)
    opt = fleet.distributed_optimizer(paddle.optimizer.Adam(0.01, parameters=model.parameters(), grad_clip=clip))
    rank, world = dist.get_rank(), dist.get_world_size()
    data = np.random.default_rng(1)
    losses, grad_bytes = [], 0
    for _ in range(4):
        x = data.normal(size=(8, 16)).astype("float32")
        y = data.integers(0, 2, size=(8,))
        loss = paddle.nn.functional.cross_entropy(
            model(paddle.to_tensor(x[rank::world])), paddle.to_tensor(y[rank::world])
        )
        loss.backward()
        grad_bytes = sum(p._grad._data.nbytes for p in model.parameters() if p._grad is not None)
        opt.step()
        opt.clear_grad()
        dist.all_reduce(loss, dist.ReduceOp.AVG)
        losses.append(float(loss))
    states = (
        opt.state_bytes() if sharding else sum(t._data.nbytes for s in opt._accumulators.values() for t in s.values())
    )
    weights = np.concatenate([p.numpy().ravel() for p in model.parameters()])
    gathered = []
    dist.all_gather(gathered, paddle.to_tensor(weights))
    same = all(np.array_equal(g.numpy(), weights) for g in gathered)
    return {"losses": losses, "state_bytes": states, "grad_bytes": grad_bytes, "weights_equal_on_ranks": same}


results = {name: run(*args) for name, args in {"dp": (False, 1), "stage1": (True, 1), "stage2": (True, 2)}.items()}
if dist.get_rank() == 0:
    print(json.dumps(results))
