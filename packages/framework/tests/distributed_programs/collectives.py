"""Every collective against NumPy on this world size, then the errors; prints 'RESULT <json>' on
rank 0. Each rank's input is a function of its rank, so the expected results are computed here."""

import json

import numpy as np

import paddlectl.framework as paddle
import paddlectl.framework.distributed as dist

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()


def value(r, shape=(3, 4), dtype="float32"):
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) - r).astype(dtype)


every = np.stack([value(r) for r in range(world)])
for op, expected in [
    (dist.ReduceOp.SUM, every.sum(0)),
    (dist.ReduceOp.MAX, every.max(0)),
    (dist.ReduceOp.MIN, every.min(0)),
    (dist.ReduceOp.PROD, every.prod(0)),
    (dist.ReduceOp.AVG, every.mean(0)),
]:
    t = paddle.to_tensor(value(rank))
    dist.all_reduce(t, op)
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6, err_msg=f"all_reduce op {op}")
t = paddle.to_tensor(value(rank, dtype="int64"))
dist.all_reduce(t).wait()
assert t.dtype == paddle.int64 and (t.numpy() == every.astype("int64").sum(0)).all()
t = paddle.to_tensor(value(rank))
task = dist.all_reduce(t, sync_op=False)
task.wait()
np.testing.assert_allclose(t.numpy(), every.sum(0))

t = paddle.to_tensor(value(rank))
dist.broadcast(t, src=world - 1)
assert (t.numpy() == value(world - 1)).all()

gathered = []
dist.all_gather(gathered, paddle.to_tensor(value(rank)))
assert len(gathered) == world and all((g.numpy() == value(r)).all() for r, g in enumerate(gathered))

out = paddle.zeros([3, 4])
dist.reduce_scatter(out, [paddle.to_tensor(value(rank) + k) for k in range(world)])
np.testing.assert_allclose(out.numpy(), sum(value(r) + rank for r in range(world)))

t = paddle.to_tensor(value(rank))
dist.reduce(t, dst=0)
np.testing.assert_allclose(t.numpy(), every.sum(0) if rank == 0 else value(rank))

if world > 1 and rank == 0:  # (a blocking send to oneself may wait forever: MPI leaves it unsafe)
    dist.send(paddle.to_tensor(value(7)), dst=world - 1)
elif world > 1 and rank == world - 1:
    t = paddle.zeros([3, 4])
    dist.recv(t, src=0)
    assert (t.numpy() == value(7)).all()

pair = dist.new_group([0, world - 1])
t = paddle.to_tensor(value(rank))
if rank in (0, world - 1):
    dist.all_reduce(t, group=pair)
    np.testing.assert_allclose(t.numpy(), value(0) + value(world - 1))
    assert pair.nranks == 2 and pair.rank == (0 if rank == 0 else 1)
else:
    assert pair.rank == -1
dist.barrier()

errors = {}
try:  # rank r passes r+3 rows: every rank must raise, none may hang
    dist.all_reduce(paddle.zeros([rank + 3, 2]))
except dist.DistributedError as exc:
    errors["shape"] = str(exc)
try:
    dist.broadcast(paddle.zeros([2], dtype="float64" if rank else "float32"), src=0)
except dist.DistributedError as exc:
    errors["dtype"] = str(exc)
assert set(errors) == {"shape", "dtype"}, errors
if rank == 0:
    print("RESULT " + json.dumps({"world": world, "errors": errors}))
