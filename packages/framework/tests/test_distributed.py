"""paddle.distributed parts that need no MPI: the strategy's checks, Paddle's bucket grouping,
sharding's deal, the sampler's defaults from the launcher, checkpoint metadata checks."""

import json

import pytest

import paddlectl.framework as paddle
from paddlectl.framework.distributed import Sharded, comm, launch
from paddlectl.framework.distributed.checkpoint import read_metadata
from paddlectl.framework.distributed.data_parallel import assign_buckets
from paddlectl.framework.distributed.fleet import DistributedStrategy
from paddlectl.framework.distributed.fleet.sharding import deal
from paddlectl.framework.errors import CheckpointError, ConfigError


def test_strategy_fields_are_checked_and_configs_merge_key_by_key():
    strategy = DistributedStrategy()
    strategy.sharding_configs = {"stage": 2}
    assert strategy.sharding_configs["stage"] == 2 and strategy.sharding_configs["segment_broadcast_MB"] == 32.0
    with pytest.raises(ConfigError, match="no field 'shardng'; did you mean 'sharding'"):
        strategy.shardng = True
    with pytest.raises(ConfigError, match="must be 1 .* or 2"):
        strategy.sharding_configs = {"stage": 3}
    with pytest.raises(ConfigError, match="no key 'k_step'; did you mean 'k_steps'"):
        strategy.gradient_merge_configs = {"k_step": 4}
    with pytest.raises(ConfigError, match="is a switch"):
        strategy.amp = 1


def test_buckets_follow_paddle_reverse_order_with_a_small_first_bucket():
    # 1 KiB parameters (256 float32): the first bucket closes at last_comm_buffer_size, the others at comm_buffer_size
    params = [paddle.create_parameter([256], "float32") for _ in range(7)]
    buckets = assign_buckets(params, comm_buffer_size=3 / 1024, last_comm_buffer_size=1 / 1024)
    index = {id(p): i for i, p in enumerate(params)}
    assert [[index[id(p)] for p in b.params] for b in buckets] == [[6], [5, 4, 3], [2, 1, 0]]
    assert all(b.buffer.size == sum(p.size for p in b.params) for b in buckets)


def test_deal_gives_the_largest_buckets_to_the_least_loaded_rank():
    sizes = [400, 100, 300, 200, 100]
    buckets = assign_buckets([paddle.create_parameter([n], "float32") for n in sizes], 1e-9, 1e-9)
    owners = deal(buckets, 2)
    load = [sum(b.nbytes for b, o in zip(buckets, owners, strict=True) if o == r) for r in range(2)]
    assert load == [2400, 2000]


def test_distributed_batch_sampler_takes_rank_and_size_from_the_launcher(monkeypatch):
    monkeypatch.setitem(comm._STATE, "world", None)  # before MPI starts (a test in this process may have started it)
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("PMI_SIZE", "2")
    sampler = paddle.io.DistributedBatchSampler(list(range(10)), batch_size=2)
    assert (sampler.nranks, sampler.local_rank) == (2, 1)
    assert list(sampler) == [[2, 3], [6, 7], [9]]
    assert paddle.distributed.ParallelEnv().rank == 1
    monkeypatch.setenv("PMI_RANK", "x")
    with pytest.raises(ConfigError, match="PMI_RANK='x' is not an integer"):
        paddle.distributed.get_rank()


def test_ranks_get_a_share_of_the_cores_unless_the_user_set_their_threads(monkeypatch):
    monkeypatch.setattr(launch, "physical_cores", lambda: 8)
    env = launch.rank_environment(3, None, {"PATH": "/bin", "OMP_NUM_THREADS": "4"})
    assert env == {"PATH": "/bin", "OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "2", "NUMBA_NUM_THREADS": "2"}
    assert launch.rank_environment(16, None, {})["NUMBA_NUM_THREADS"] == "1"
    assert launch.rank_environment(2, ["a", "b"], {"PATH": "/bin"}) == {"PATH": "/bin"}  # other hosts' cores unknown


def test_launch_refuses_bad_arguments_before_starting_mpiexec(tmp_path):
    with pytest.raises(ConfigError, match="--nproc must be a positive number"):
        launch.command(["x.py"], 0)
    with pytest.raises(ConfigError, match="script 'missing.py' does not exist"):
        launch.command(["missing.py"], 2)


def test_sharded_and_metadata_refuse_bad_input(tmp_path):
    with pytest.raises(CheckpointError, match="Sharded: axis 2 is not a dimension of a 2-D tensor"):
        Sharded(paddle.zeros([2, 2]), axis=2)
    (tmp_path / "metadata.json").write_text(
        json.dumps({"format": "paddlectl-distributed-checkpoint", "version": 1, "tensors": {"w": {"dtype": "float32"}}})
    )
    with pytest.raises(CheckpointError, match="the entry of tensor 'w' is malformed"):
        read_metadata(tmp_path)
    entry = {"dtype": "float32", "global_shape": [2], "axis": None}
    entry["shards"] = [{"file": "../x", "key": "w", "offset": 0, "shape": [2], "sha256": "0"}]
    (tmp_path / "metadata.json").write_text(
        json.dumps({"format": "paddlectl-distributed-checkpoint", "version": 1, "tensors": {"w": entry}})
    )
    with pytest.raises(CheckpointError, match="file '../x' is not a file name"):
        read_metadata(tmp_path)


def test_launch_relays_a_ranks_own_rules_and_keeps_hydras_notice():
    rule = "=" * 83 + "\n"
    notice = [rule, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n", "=   PID 12 RUNNING AT vm\n", rule]
    echoed = []
    hydra = launch.relay(["step 1\n", "=====\n", "table\n", *notice, "YOUR APPLICATION TERMINATED\n"], echoed.append)
    assert echoed == ["step 1", "=====", "table"]
    assert hydra[1].startswith("=   BAD TERMINATION") and hydra[-1].startswith("YOUR APPLICATION")
    assert launch.relay(["=====\n"], echoed.append) == [] and echoed[-1] == "====="
