"""Concurrent evaluations logging to one SQLite store lose no run; lock collisions are retried."""

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

from paddlectl.eval_harness.retry import is_transient, with_backoff
from paddlectl.eval_harness.store import LocalStore
from paddlectl.eval_harness.tracking import default_uri

TESTS = Path(__file__).parent


def test_four_concurrent_evaluations_into_one_fresh_sqlite_store_lose_no_run(exported, config_file, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "paddlectl.eval_harness", "run", "--model", str(exported),
               "--task", "digits_task:DigitsTask", "-c", str(config_file), "--json",
               # keep the measurement short: what is under test is four processes logging at once
               "-o", "Eval.harness.max_samples=64", "-o", "Eval.harness.batch_sizes=[1]",
               "-o", "Eval.harness.repeats=20", "-o", "Eval.harness.rounds=2"]  # fmt: skip
    children = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(4)
    ]
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=400)
        assert child.returncode == 0, err[-3000:]
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    assert all(o["logged"] for o in outputs), outputs
    run_ids = {o["run_id"] for o in outputs}
    assert len(run_ids) == 4

    store = LocalStore(tmp_path / "eval")
    assert store.pending() == []
    assert {r.state()["run_id"] for r in store.runs()} == run_ids
    client = MlflowClient(default_uri(tmp_path / "eval"))
    for o in outputs:
        mlrun = client.get_run(o["run_id"])
        assert mlrun.info.status == "FINISHED"
        assert mlrun.data.metrics["accuracy"] == o["metrics"]["accuracy"]
    versions = client.search_model_versions("name = 'digits-lenet'")
    assert sorted(int(v.version) for v in versions) == [1, 2, 3, 4]
    assert {v.run_id for v in versions} == run_ids


def test_a_locked_database_is_retried_until_the_lock_is_released(tmp_path):
    db = tmp_path / "shared.db"
    sqlite3.connect(db).execute("create table runs (id integer)").connection.commit()
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("begin exclusive")
    releaser = threading.Timer(0.6, holder.execute, args=("commit",))
    releaser.start()
    attempts = []

    def insert():
        attempts.append(time.monotonic())
        with sqlite3.connect(db, timeout=0.05) as conn:
            conn.execute("insert into runs values (1)")

    try:
        with_backoff(insert, attempts=20, base_s=0.05, cap_s=0.2)
    finally:
        releaser.join()
    assert len(attempts) > 1
    assert sqlite3.connect(db).execute("select count(*) from runs").fetchone() == (1,)


def test_only_lock_collisions_are_retried():
    calls = []

    def broken():
        calls.append(1)
        raise ValueError("no such table: runs")

    try:
        with_backoff(broken, attempts=5, sleep=lambda s: None)
    except ValueError:
        pass
    assert calls == [1]
    wrapped = RuntimeError("logging failed")
    wrapped.__cause__ = sqlite3.OperationalError("database is locked")
    assert is_transient(wrapped)
