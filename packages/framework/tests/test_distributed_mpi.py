"""Real multi-process runs under ``mpiexec -n 2`` (and 3): collectives against NumPy, DataParallel
against one process, sharding against plain DataParallel, reshard round trips and the
kill-and-resume drill. Each job goes through ``launch.run``, as ``paddlectl launch`` does, with a
bound on its time; they skip only when mpi4py is not installed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'paddlectl-framework[distributed]'")

from paddlectl.framework.distributed import checkpoint, launch  # noqa: E402
from paddlectl.framework.errors import CheckpointError  # noqa: E402
from paddlectl.framework.kernels.cores import physical_cores  # noqa: E402

PROGRAMS = Path(__file__).parent / "distributed_programs"
JOB_LIMIT_S = 120  # a job that runs past this has hung


def job(program: str, nproc: int, *args: str) -> tuple[launch.Outcome, list[str]]:
    lines: list[str] = []
    start = time.monotonic()
    outcome = launch.run([str(PROGRAMS / program), *args], nproc, echo=lines.append)
    assert time.monotonic() - start < JOB_LIMIT_S
    return outcome, lines


def result(lines: list[str]) -> dict:
    found = [line[len("RESULT ") :] for line in lines if line.startswith("RESULT ")]
    assert len(found) == 1, lines
    return json.loads(found[0])


def suite(nproc: int, *programs: list[str]) -> dict[str, list[str]]:
    """Run several programs in one job (one framework import per rank); each program's output."""
    argv = [a for program in programs for a in ("+", *program)][1:]
    outcome, lines = job("suite.py", nproc, *argv)
    assert outcome.code == 0, outcome.failures
    output: dict[str, list[str]] = {}
    for line in lines:
        if line.startswith("BEGIN "):
            current = output.setdefault(line[len("BEGIN ") :], [])
        else:
            current.append(line)
    return output


@pytest.fixture(scope="module")
def checkpoint_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ckpt") / "two"


@pytest.fixture(scope="module")
def two_ranks(checkpoint_dir) -> dict[str, list[str]]:
    return suite(
        2,
        ["collectives.py"],
        ["dp_train.py", "5", "0.0005", "0.0005"],  # tiny buckets: several Iallreduce
        ["sharding_train.py"],
        ["checkpoint_reshard.py", "save", str(checkpoint_dir)],
        ["threads.py"],
    )


@pytest.fixture(scope="module")
def three_ranks(two_ranks, checkpoint_dir) -> dict[str, list[str]]:
    return suite(3, ["collectives.py"], ["checkpoint_reshard.py", "load", str(checkpoint_dir)])


@pytest.mark.parametrize("nproc", [2, 3])
def test_collectives_match_numpy_and_mismatches_raise_on_every_rank(nproc, request):
    lines = request.getfixturevalue("two_ranks" if nproc == 2 else "three_ranks")["collectives.py"]
    errors = result(lines)["errors"]
    assert "rank 0 has float32[3, 2], rank 1 has float32[4, 2]" in errors["shape"]
    assert "rank 0 has float32[2], rank 1 has float64[2]" in errors["dtype"]


def test_ranks_on_one_machine_share_its_cores(two_ranks):
    share = launch.rank_environment(2, None, {})["NUMBA_NUM_THREADS"]
    assert share == str(max(1, physical_cores() // 2))
    if not any(name in os.environ for name in launch.THREAD_VARIABLES):  # the job inherits what is set here
        counts = result(two_ranks["threads.py"])
        assert counts == {"numba": int(share), "OMP_NUM_THREADS": share, "OPENBLAS_NUM_THREADS": share}


def test_data_parallel_two_ranks_equal_one_process_with_the_global_batch(two_ranks):
    found = result(two_ranks["dp_train.py"])
    assert found["buckets"] == 2
    np.testing.assert_allclose(found["parallel"], found["alone"], rtol=0, atol=1e-5)


def test_sharding_stages_equal_data_parallel_with_a_share_of_the_memory(two_ranks):
    runs = json.loads(next(line for line in two_ranks["sharding_train.py"] if line.startswith("{")))
    for stage in ("stage1", "stage2"):
        np.testing.assert_allclose(runs[stage]["losses"], runs["dp"]["losses"], rtol=0, atol=1e-6)
        assert runs[stage]["weights_equal_on_ranks"]
        assert runs[stage]["state_bytes"] < 0.6 * runs["dp"]["state_bytes"]  # ~1/2 on 2 ranks
    assert runs["stage1"]["grad_bytes"] == runs["dp"]["grad_bytes"]
    assert runs["stage2"]["grad_bytes"] < 0.6 * runs["dp"]["grad_bytes"]


@pytest.fixture(scope="module")
def saved_by_two(two_ranks, checkpoint_dir) -> Path:
    assert result(two_ranks["checkpoint_reshard.py"]) == {"saved": 2}
    return checkpoint_dir


def test_checkpoint_saved_by_two_ranks_loads_on_three_and_refuses_an_indivisible_dim(three_ranks):
    found = result(three_ranks["checkpoint_reshard.py"])
    assert found["loaded"] == 3
    assert "world size 3 does not divide its dimension 0 (4)" in found["v"]


def test_checkpoint_saved_by_two_ranks_loads_in_one_process_and_merges(saved_by_two, tmp_path):
    from paddlectl.framework import zeros
    from paddlectl.framework.distributed import Sharded, load_state_dict

    w = zeros([6, 4])
    load_state_dict({"w": Sharded(w)}, saved_by_two)  # world of one: every row
    np.testing.assert_array_equal(w.numpy(), np.arange(24, dtype="float32").reshape(6, 4))
    out = tmp_path / "merged.safetensors"
    assert checkpoint.merge(saved_by_two, out) == 4
    import safetensors.numpy

    merged = safetensors.numpy.load_file(str(out))
    np.testing.assert_array_equal(merged["v"], np.arange(8, dtype="float64").reshape(4, 2))
    assert merged["owned"].tolist() == [5, 5]


@pytest.fixture(scope="module")
def saved_by_one(tmp_path_factory) -> Path:
    """checkpoint_reshard.py's checkpoint as a world of one writes it (in this process)."""
    import paddlectl.framework as paddle
    from paddlectl.framework.distributed import Sharded, save_state_dict

    path = tmp_path_factory.mktemp("ckpt") / "one"
    state = {
        "w": Sharded(paddle.to_tensor(np.arange(24, dtype="float32").reshape(6, 4))),
        "v": Sharded(paddle.to_tensor(np.arange(8, dtype="float64").reshape(4, 2))),
        "b": paddle.to_tensor(np.ones(3, "float64")),
        "owned": paddle.to_tensor(np.full(2, 5, "int64")),
    }
    save_state_dict(state, path)
    return path


def test_checkpoint_saved_by_one_process_loads_on_two_ranks(saved_by_one):
    found = result(suite(2, ["checkpoint_reshard.py", "load", str(saved_by_one)])["checkpoint_reshard.py"])
    assert found == {"loaded": 2, "v": "ok"}


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_a_damaged_checkpoint_is_refused_with_the_tensor_and_file_named(saved_by_two, tmp_path):
    flipped = _copy(saved_by_two, tmp_path / "flipped")
    shard = flipped / "rank-1.safetensors"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF  # the last byte of the last tensor's data
    shard.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"rank-1\.safetensors fails its SHA-256 checksum"):
        checkpoint.merge(flipped, tmp_path / "out.safetensors")
    lying = _copy(saved_by_two, tmp_path / "lying")
    meta = json.loads((lying / "metadata.json").read_text())
    meta["tensors"]["b"]["global_shape"] = [4]
    meta["tensors"]["b"]["shards"][0]["shape"] = [4]
    (lying / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"'b'.* is float64\[3\] but metadata.json says float64\[4\]"):
        checkpoint.merge(lying, tmp_path / "out.safetensors")
    gap = _copy(saved_by_two, tmp_path / "gap")
    meta = json.loads((gap / "metadata.json").read_text())
    meta["tensors"]["w"]["shards"].pop()
    (gap / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"'w' is malformed \(the shards cover 3 of 6 along axis 0\)"):
        checkpoint.read_metadata(gap)
    assert not (tmp_path / "out.safetensors").exists()


def test_kill_a_rank_mid_training_then_resume_gives_the_uninterrupted_losses(tmp_path):
    def losses(lines):
        return {int(s): float(v) for _, s, v in (line.split() for line in lines if line.startswith("LOSS "))}

    outcome, lines = job("resume_drill.py", 2, "5", str(tmp_path / "straight"))
    assert outcome.code == 0, outcome.failures
    straight = losses(lines)
    start = time.monotonic()
    outcome, lines = job("resume_drill.py", 2, "5", str(tmp_path / "drill"), "--kill-at", "1")
    assert time.monotonic() - start < 30 + 15  # the job ends promptly (15 s: starting two ranks here)
    assert outcome.code == 1 and outcome.failures == [
        "rank 1 died (exit code or signal 9) without a Python error; the job was stopped"
    ]
    assert set(losses(lines)) == {0, 1}
    outcome, lines = job("resume_drill.py", 2, "5", str(tmp_path / "drill"), "--resume")
    assert outcome.code == 0, outcome.failures
    resumed = losses(lines)
    assert sorted(resumed) == [2, 3, 4]
    assert all(resumed[s] == straight[s] for s in resumed)
