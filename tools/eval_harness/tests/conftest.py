"""Shared fixtures: one trained LeNet per session, harness settings on a temporary store, and a
real ``mlflow server`` on a free 127.0.0.1 port for the tests that need one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from digits_task import DigitsTask, EagerRunner, export_lenet, train_lenet

import paddlectl.framework as paddle
from paddlectl.eval_harness.settings import load_settings

TESTS = Path(__file__).parent


@pytest.fixture(scope="session")
def lenet():
    return train_lenet()


@pytest.fixture(scope="session")
def weights(lenet, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("weights") / "lenet.pdparams"
    paddle.save(lenet.state_dict(), str(path))
    return path


@pytest.fixture(scope="session")
def exported(lenet, tmp_path_factory) -> Path:
    """LeNet exported with paddle.jit.save: what `paddlectl eval run --model` is given."""
    return export_lenet(lenet, tmp_path_factory.mktemp("export") / "lenet")


@pytest.fixture
def runner(lenet) -> EagerRunner:
    return EagerRunner(lenet)


@pytest.fixture
def task() -> DigitsTask:
    return DigitsTask()


def harness_config(out: Path, **harness) -> dict:
    base = {
        "batch_sizes": [1, 4],
        "warmup": 3,
        "repeats": 30,
        "cold_start": False,
        "threads": 1,
        "model_name": "digits-lenet",
        "output_dir": str(out),
        "cost": {"machine_price_per_hour": 3.6},
        "thresholds": {"accuracy": {"direction": "higher", "absolute": 0.02}},
        # this 2-core machine is shared: other jobs move latency by up to ~1.7x between runs, so
        # only a slowdown beyond x3 counts here (a 50 ms sleep against a ~1 ms model is ~x50)
        "latency_gate": {"max_slowdown": 2.0, "min_samples": 20},
    }
    base.update(harness)
    return {"Global": {"task": "vision.digits"}, "Eval": {"harness": base}}


@pytest.fixture
def config(tmp_path) -> dict:
    return harness_config(tmp_path / "eval")


@pytest.fixture
def config_file(tmp_path, config) -> Path:
    path = tmp_path / "exp.yml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def settings(config):
    return load_settings(config)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MlflowServer:
    """A real ``mlflow server`` process on 127.0.0.1, stopped within a bounded time.

    ``spawn`` returns at once and ``wait_ready`` blocks until ``/health`` answers: the server
    takes 15-60 s to import on this shared 2-core machine, so tests start it early and overlap
    that with other work.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.process: subprocess.Popen | None = None
        self.uri = ""
        self.log: Path | None = None

    def spawn(self) -> None:
        old = self.uri
        port = free_port()
        while old.endswith(f":{port}"):  # a restart must not look like the old address coming back
            port = free_port()
        self.uri = f"http://127.0.0.1:{port}"
        self.root.mkdir(parents=True, exist_ok=True)
        self.log = self.root / f"server-{port}.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
                 "--backend-store-uri", f"sqlite:///{self.root / 'server.db'}",
                 "--artifacts-destination", (self.root / "artifacts").as_uri()],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

    def wait_ready(self, timeout_s: float = 180.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mlflow server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.uri + "/health", timeout=2) as response:
                    if response.status == 200:
                        return self.uri
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"mlflow server on {self.uri} did not answer /health within {timeout_s} s")

    def restart(self) -> None:
        """Stop the server now and start it again on the same stores (at a new port)."""
        self.stop()
        self.spawn()

    def stop(self, timeout_s: float = 20.0) -> None:
        """SIGTERM the server's process group, SIGKILL it if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=timeout_s)


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    server = MlflowServer(tmp_path_factory.mktemp("server"))
    server.spawn()
    yield server
    server.stop()


@pytest.fixture(scope="session", autouse=True)
def _spawn_mlflow_server_early(request):
    """Start the server with the session when a selected test needs it, so its start overlaps."""
    if any("mlflow_server" in getattr(item, "fixturenames", ()) for item in request.session.items):
        request.getfixturevalue("mlflow_server")
