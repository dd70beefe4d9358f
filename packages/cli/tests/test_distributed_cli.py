"""`paddlectl launch` and `paddlectl ckpt merge`: exit codes and the one line a user reads."""

import json
import subprocess
import sys
import textwrap
from importlib.resources import files

import pytest
from typer.testing import CliRunner

from paddlectl.cli.app import app


def paddlectl(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "paddlectl.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_launch_usage_errors_exit_2_before_starting_anything(tmp_path):
    runner = CliRunner()
    script = tmp_path / "s.py"
    script.write_text("")
    result = runner.invoke(app, ["launch", "--nproc", "0", str(script)])
    assert result.exit_code == 2 and "--nproc must be a positive number of processes, got 0" in result.output
    result = runner.invoke(app, ["launch", "--nproc", "2", str(tmp_path / "missing.py")])
    assert result.exit_code == 2 and "does not exist" in result.output
    result = runner.invoke(app, ["launch", "--nproc", "2", "--hosts", "a b", str(script)])
    assert result.exit_code == 2 and "'a b' is not a host name" in result.output


def test_train_on_ranks_checks_its_config_once_before_starting_them(tmp_path):
    result = paddlectl("train", "--nproc", "2", "-c", tmp_path / "missing.yml")
    assert result.returncode == 2 and result.stderr.count("error: ") == 1, result.stderr
    assert "not found; pass an existing YAML file with -c" in result.stderr and "failed" not in result.stderr


def test_a_failing_rank_stops_the_job_and_is_named_with_its_error(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'paddlectl-framework[distributed]'")
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import paddlectl.framework.distributed as dist
            dist.init_parallel_env()
            print("args", sys.argv[1:], flush=True)
            if dist.get_rank() == 1:
                raise ValueError("bad batch")
            dist.barrier()  # rank 0 would wait here forever if rank 1's failure did not end the job
            """
        )
    )
    result = paddlectl("launch", "--nproc", "2", script, "--lr", "0.1")
    assert result.returncode == 1
    assert "args ['--lr', '0.1']" in result.stdout
    assert "error: rank 1 failed: " in result.stderr and "train.py:7: ValueError: bad batch" in result.stderr


def test_ckpt_merge_of_a_damaged_checkpoint_exits_2_with_one_line(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "metadata.json").write_text("{not json")
    result = paddlectl("ckpt", "merge", tmp_path / "ck", "-o", tmp_path / "out.safetensors")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "metadata.json is not valid JSON" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.safetensors").exists()


def test_train_on_two_ranks_takes_the_one_process_steps(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'paddlectl-framework[distributed]'")
    digits = files("paddlectl.framework.vision") / "configs" / "digits_lenet.yml"
    small = ["-o", "Train.dataset.test_fraction=0.9", "-o", "Eval.dataset.test_fraction=0.05"]
    small += ["-o", "Global.log_interval=1", "-o", "Global.epochs=1", "-o", "Train.loader.batch_size=16"]
    runs, samples = {}, {}
    for nproc in (1, 2):
        out = tmp_path / f"run{nproc}"
        result = paddlectl("train", "--nproc", nproc, "-c", digits, *small, "-o", f"Global.output_dir={out}")
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("metrics: ") == 1 and "paddlectl-rank" not in result.stdout  # rank 0 reports
        assert result.stdout.count("epoch 1/1 eval") == 1 and "img/s" in result.stdout  # its progress alone
        records = map(json.loads, (out / "metrics.jsonl").read_text().splitlines())
        train = [r for r in records if r["kind"] == "train"]
        runs[nproc] = [r["loss"] for r in train]
        samples[nproc] = [r["samples"] for r in train]  # the global batches, whatever the ranks
    # 180 digits: 11 batches of 16 split 8/8 over the ranks, then a last batch of 4 split 2/2 (a last
    # batch split unevenly would give a mean of the ranks' means, no longer the batch mean)
    assert len(runs[1]) == len(runs[2]) == 12
    assert samples[1] == samples[2] == [16] * 11 + [4]
    assert max(abs(a - b) for a, b in zip(runs[1][:11], runs[2][:11], strict=True)) < 1e-4
