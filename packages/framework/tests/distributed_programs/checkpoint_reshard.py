"""argv: save DIR | load DIR. save: each rank writes its rows of 'w' (6x4) and 'v' (4x2) as
Sharded, 'b' replicated and 'owned' held by the last rank only. load: this world size's rows of
'w' back (reshard), 'b' and 'owned' whole, then 'v' as Sharded (3 ranks: indivisible). Prints
'RESULT <json>' on rank 0."""

import json
import sys

import numpy as np

import paddlectl.framework as paddle
import paddlectl.framework.distributed as dist

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
W = np.arange(24, dtype="float32").reshape(6, 4)
V = np.arange(8, dtype="float64").reshape(4, 2)


def rows(array):
    n = array.shape[0] // world
    return array[rank * n : (rank + 1) * n]


mode, path = sys.argv[1], sys.argv[2]
if mode == "save":
    state = {
        "w": dist.Sharded(paddle.to_tensor(rows(W))),
        "v": dist.Sharded(paddle.to_tensor(rows(V))),
        "b": paddle.to_tensor(np.ones(3, "float64")),
    }
    if rank == world - 1:
        state["owned"] = paddle.to_tensor(np.full(2, 5, "int64"))
    dist.save_state_dict(state, path)
    result = {"saved": world}
else:
    w, b, owned = paddle.zeros([6 // world, 4]), paddle.zeros([3], "float64"), paddle.zeros([2], "int64")
    dist.load_state_dict({"w": dist.Sharded(w), "b": b, "owned": owned}, path)
    assert (w.numpy() == rows(W)).all() and (b.numpy() == 1).all() and (owned.numpy() == 5).all()
    result = {"loaded": world}
    try:
        dist.load_state_dict({"v": dist.Sharded(paddle.zeros([max(4 // world, 1), 2], "float64"))}, path)
        result["v"] = "ok"
    except paddle.errors.CheckpointError as exc:
        result["v"] = str(exc)
if rank == 0:
    print("RESULT " + json.dumps(result))
