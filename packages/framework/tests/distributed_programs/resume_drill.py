"""argv: STEPS DIR [--resume] [--kill-at K]. DataParallel training that writes a distributed
checkpoint (weights, Adam states, step) after every step; with --kill-at, rank 1 kills itself
(SIGKILL) right after checkpoint K; with --resume it continues from DIR. Batch s is drawn from
seed s, so a resumed run sees the batches the uninterrupted one saw. Prints 'LOSS step value'."""

import os
import signal
import sys

import numpy as np

import paddlectl.framework as paddle
import paddlectl.framework.distributed as dist
from paddlectl.framework.distributed.checkpoint import load_tensors

steps, path = int(sys.argv[1]), sys.argv[2]
resume = "--resume" in sys.argv
kill_at = int(sys.argv[sys.argv.index("--kill-at") + 1]) if "--kill-at" in sys.argv else None
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
paddle.seed(11)
model = paddle.DataParallel(paddle.nn.Sequential(paddle.nn.Linear(5, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2)))
opt = paddle.optimizer.Adam(0.05, parameters=model.parameters())
start = 0
if resume:
    saved = load_tensors(path)
    model.set_state_dict({k[len("model.") :]: v for k, v in saved.items() if k.startswith("model.")})
    opt.set_state_dict({k[len("opt.") :]: v for k, v in saved.items() if k.startswith("opt.")})
    start = int(saved["step"].item())
for step in range(start, steps):
    data = np.random.default_rng(step)
    x, y = data.normal(size=(8, 5)).astype("float32"), data.integers(0, 2, size=(8,))
    loss = paddle.nn.functional.cross_entropy(model(paddle.to_tensor(x[rank::world])), paddle.to_tensor(y[rank::world]))
    loss.backward()
    opt.step()
    opt.clear_grad()
    dist.all_reduce(loss, dist.ReduceOp.AVG)
    if rank == 0:
        print(f"LOSS {step} {float(loss)!r}", flush=True)
    state = {f"model.{k}": v for k, v in model.state_dict().items()}
    state.update({f"opt.{k}": v for k, v in opt.state_dict().items() if isinstance(v, paddle.Tensor)})
    state["step"] = paddle.to_tensor(np.array(step + 1, dtype="int64"))
    dist.save_state_dict(state, path)
    if kill_at == step and rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
