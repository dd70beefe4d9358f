"""Drive the harness's pipeline in-process with an eager model (the CLI's `run` uses the Predictor)."""

from __future__ import annotations

from pathlib import Path

from paddlectl.eval_harness import pipeline
from paddlectl.eval_harness.evaluate import evaluate
from paddlectl.eval_harness.settings import load_settings
from paddlectl.eval_harness.store import LocalStore, RunDir


def evaluate_and_record(task, runner, config: dict, model_path: Path) -> RunDir:
    settings = load_settings(config)
    report, acc = evaluate(task, runner, settings, model_path=model_path, config=config)
    return pipeline.record(LocalStore(settings.output_dir), report, acc, task)


def evaluate_and_log(task, runner, config: dict, model_path: Path, tracking_uri: str | None = None) -> pipeline.Logged:
    run = evaluate_and_record(task, runner, config, model_path)
    settings = load_settings(config)
    return pipeline.log(run, settings.output_dir, tracking_uri)
