"""What each ``paddlectl eval`` command does, once ``cli`` has parsed its arguments.

Every string that comes from the user, a config, a model or a run (names, metric names, error
messages) is escaped before rich prints it: ``[distributed]`` or ``acc[top1]`` is text, not markup.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from paddlectl.framework.config import apply_override, load_config
from paddlectl.framework.errors import ConfigError, PaddlectlError

from . import coldstart, failures, pipeline
from .errors import EvalHarnessError, TrackingUnavailable
from .evaluate import evaluate
from .plots import history_plot
from .predictor import open_predictor
from .progress import Stages, rich_stages
from .served import onnx_processing
from .settings import HarnessSettings, load_settings
from .store import LocalStore, write_json, write_text
from .task import load_task
from .training import compare_training

USAGE_ERROR, FAILED = 2, 1

console = Console()
err_console = Console(stderr=True)


@contextlib.contextmanager
def usage_errors():
    """A user's mistake becomes a one-line message and exit code 2."""
    try:
        yield
    except (EvalHarnessError, PaddlectlError) as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(USAGE_ERROR) from None


def _context(
    config_path: Path | None, overrides: list[str], output_dir: Path | None, uri: str | None, model: Path | None = None
):
    """Config (the -c file, else the one an exported model carries), settings, local store, tracking
    URI, and whether an experiment config was found at all."""
    if config_path is None and model is not None and (Path(model) / "config.yml").is_file():
        config_path = Path(model) / "config.yml"
    if config_path is not None:
        config = load_config(config_path, overrides)
    else:
        config = {}
        for text in overrides:
            apply_override(config, text)
    settings = load_settings(config)
    out = output_dir or settings.output_dir
    return config, settings, LocalStore(out), uri or settings.tracking_uri, config_path is not None


def _say(message: str) -> None:
    err_console.print(message, markup=False, highlight=False, soft_wrap=True)


def _evaluate_and_log(config: dict[str, Any], settings: HarnessSettings, store: LocalStore, uri: str | None,
                      model: Path, task_spec: str | None, config_given: bool) -> pipeline.Logged:  # fmt: skip
    spec = task_spec or (config.get("Global") or {}).get("task") or _served_task_name(model)
    with rich_stages(err_console) as stages:
        stages.stage(f"opening {model}")
        task = load_task(spec, config, model, config_given)
        if getattr(task, "processing_from", None) == "config":
            _say(f"note: {model} carries no {task.name} pre/post-processing; it is taken from the config")
        runner = open_predictor(model, settings.threads)
        cold = (lambda inputs: coldstart.measure(model, inputs, settings.threads)) if settings.cold_start else None
        report, acc = evaluate(
            task, runner, settings, model_path=model, config=pipeline.flat_config(config), cold_start=cold,
            stages=stages,
        )  # fmt: skip
        run = pipeline.record(store, report, acc, task)
        _say(f"wrote {run.report_path}")
        logged = _log(run, store, uri, stages)
    if logged.warning:
        _say(f"warning: {logged.warning}")
    else:
        _say(f"logged MLflow run {logged.run_id}")
    return logged


def _log(run, store: LocalStore, uri: str | None, stages: Stages) -> pipeline.Logged:
    stages.stage("logging to MLflow")
    return pipeline.log(run, store.output_dir, uri)


def _served_task_name(model: Path) -> str:
    """The task an exported model was made for, recorded in it by ``paddlectl export``."""
    from paddlectl.framework.hapi.export import served_task_name
    from paddlectl.framework.jit.saved_model import read_model_dir

    if Path(model).is_file():  # an .onnx file: `export --format onnx` keeps the processing in its metadata
        name = (onnx_processing(model).get("preprocess") or {}).get("task")
        if not name:
            raise ConfigError(
                f"no task given and {model} records none; pass --task NAME or set Global.task in the config"
            )
        return name
    try:
        return served_task_name(read_model_dir(model))
    except PaddlectlError as exc:
        raise ConfigError(f"no task given and {exc}; pass --task NAME or set Global.task in the config") from None


def run(model, task, config, override, output_dir, tracking_uri, as_json) -> None:
    with usage_errors():
        cfg, settings, store, uri, given = _context(config, override, output_dir, tracking_uri, model)
        logged = _evaluate_and_log(cfg, settings, store, uri, model, task, given)
    report = logged.run.report()
    if as_json:
        sys.stdout.write(json.dumps({"local_id": report.local_id, "run_id": logged.run_id, "logged": logged.run_id is not None,
                                     "report": str(logged.run.report_path), "metrics": report.metrics}, default=str) + "\n")  # fmt: skip
    else:
        shown: dict[str, float | str] = dict(report.metrics)
        shown.setdefault("cost_per_1k", "not set")
        _metrics_table(f"{report.model_name} on {report.task}", {"run": shown})
        _say(f"cost per 1,000 predictions: {settings.cost.basis()}")
    _refuse_failed_inputs(report, settings, logged.run.path)


def _refuse_failed_inputs(report, settings: HarnessSettings, kept_in: Path) -> None:
    """Name the failed inputs by cause; exit 1 when they exceed ``max_error_rate``."""
    failed = failures.summary(report.errors)
    if failed is None:
        return
    rate = report.metrics.get("error_rate", 0.0)
    too_many = rate > settings.max_error_rate
    _say(f"{'error' if too_many else 'warning'}: {report.errors['count']} of {report.errors['total']} inputs failed "
         f"(error_rate {rate:.3g}, Eval.harness.max_error_rate {settings.max_error_rate:g}); first causes:")  # fmt: skip
    for cause, count in (report.errors.get("causes") or {}).items():
        _say(f"  {count} x {cause}")
    if too_many:
        _say(f"the run is kept in {kept_in}; fix the cause and evaluate again (or raise Eval.harness.max_error_rate)")
        raise typer.Exit(FAILED)


def _metrics_table(title: str, columns: dict[str, dict[str, float | str]]) -> None:
    table = Table(title=escape(title))
    table.add_column("metric")
    for name in columns:
        table.add_column(escape(name), justify="right")
    names = sorted(set().union(*(c.keys() for c in columns.values())))
    for metric in names:
        table.add_row(escape(metric), *(_fmt(c.get(metric)) for c in columns.values()))
    console.print(table)


def _fmt(value: float | str | None) -> str:
    if isinstance(value, str):
        return escape(value)
    return "—" if value is None else f"{value:.6g}"


def _promote_command(label: str, config: Path | None, output_dir: Path | None, uri: str | None) -> str:
    """``paddlectl eval promote LABEL`` with the options that reach the same store."""
    words = ["paddlectl", "eval", "promote", label]
    for option, value in (("-c", config), ("--output-dir", output_dir), ("--tracking-uri", uri)):
        if value is not None:
            words += [option, str(value)]
    return shlex.join(words)


def gate(candidate, model, baseline, task, config, override, output_dir, tracking_uri, out, as_json) -> None:
    from . import gate as gating  # scipy is paid for by the gate only

    with usage_errors():
        cfg, settings, store, uri, given = _context(config, override, output_dir, tracking_uri, model)
        if model is not None:
            candidate = _evaluate_and_log(cfg, settings, store, uri, model, task, given).run.local_id
    reasons: list[str] = []
    with usage_errors():
        tracker = _tracker_or_reason(store, uri, reasons)
        cand_report, cand_label = pipeline.find_report(candidate, store, tracker)
        base_report, base_label = None, None
        if baseline == "champion":
            base_id = tracker.champion_run_id(cand_report.model_name) if tracker else None
            if base_id is None and tracker is not None:
                reasons.append(
                    f"model {cand_report.model_name!r} has no champion yet; promote one with `paddlectl eval promote RUN`"
                )
        else:
            base_id = baseline
        if base_id is not None:
            base_report, base_label = pipeline.find_report(base_id, store, tracker)
    fix = "pass --baseline with a working run"
    if baseline == "champion":
        working = cand_label if not failures.promotion_problems(cand_report) else "RUN"
        fix = f"make a working run the champion: `{_promote_command(working, config, output_dir, tracking_uri)}`"
    result = gating.run_gate(cand_report, base_report, settings, base_label, cand_label, fix)
    result.reasons = reasons + result.reasons if base_report is not None else (reasons or result.reasons)
    folder = out or store.output_dir / "gates" / f"{cand_label}-vs-{base_label or 'none'}"
    write_json(folder / "gate.json", result.to_dict())
    write_text(folder / "gate.md", gating.to_markdown(result))
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), default=str) + "\n")
    else:
        _gate_table(result)
    _say(result.summary())
    _say(f"wrote {folder / 'gate.json'} and {folder / 'gate.md'}")
    raise typer.Exit(result.exit_code)


def _tracker_or_reason(store: LocalStore, uri: str | None, reasons: list[str]):
    try:
        return pipeline.tracker_for(store.output_dir, uri)
    except TrackingUnavailable as exc:
        reasons.append(str(exc))
        return None


def _gate_table(result) -> None:
    from . import gate

    style = {
        gate.REGRESSION: "[red]REGRESSION[/]",
        gate.INCONCLUSIVE: "[yellow]inconclusive[/]",
        gate.PASS: "[green]pass[/]",
    }
    table = Table(title=f"gate: {escape(result.candidate)} vs {escape(str(result.baseline))}")
    for column in ("status", "check", "candidate", "baseline", "detail"):
        table.add_column(column, overflow="fold")
    for c in result.ordered():
        table.add_row(style[c.status], escape(c.name), _fmt(c.candidate), _fmt(c.baseline), escape(c.detail))
    console.print(table)
    for reason in result.reasons:
        console.print(f"[yellow]![/] {escape(reason)}")


def promote(run_id, force, config, override, output_dir, tracking_uri) -> None:
    with usage_errors():
        _, _, store, uri, _ = _context(config, override, output_dir, tracking_uri)
        tracker = pipeline.tracker_for(store.output_dir, uri)
        report, _ = pipeline.find_report(run_id, store, tracker)
        local = store.find(run_id)
        if local is not None and local.state().get("run_id"):
            run_id = local.state()["run_id"]
        problems = failures.promotion_problems(report)
        if problems and not force:
            _say(f"error: run {run_id} is not promoted: {'; '.join(problems)}. Fix the model or its config and "
                 "evaluate again, or pass --force to promote it anyway")  # fmt: skip
            raise typer.Exit(FAILED)
        name, version = tracker.promote(run_id)
    console.print(f"{escape(name)} version {version} (run {escape(run_id)}) is now the champion")


def sync(config, override, output_dir, tracking_uri) -> None:
    with usage_errors():
        _, _, store, uri, _ = _context(config, override, output_dir, tracking_uri)
        done = pipeline.sync(store, uri)
    for logged in done:
        console.print(f"uploaded {escape(logged.run.local_id)} as MLflow run {escape(str(logged.run_id))}")
    console.print(f"{len(done)} run(s) uploaded; {len(store.pending())} still pending")


def compare(run_a, run_b, config, override, output_dir, tracking_uri, as_json) -> None:
    with usage_errors():
        _, _, store, uri, _ = _context(config, override, output_dir, tracking_uri)
        tracker = None if store.find(run_a) and store.find(run_b) else pipeline.tracker_for(store.output_dir, uri)
        a, _ = pipeline.find_report(run_a, store, tracker)
        b, _ = pipeline.find_report(run_b, store, tracker)
    delta = {k: b.metrics[k] - a.metrics[k] for k in a.metrics.keys() & b.metrics.keys()}
    if as_json:
        sys.stdout.write(json.dumps({"a": a.metrics, "b": b.metrics, "delta": delta}, default=str) + "\n")
        return
    _metrics_table(f"{run_a} vs {run_b}", {run_a: a.metrics, run_b: b.metrics, "b - a": delta})
    if a.fingerprint != b.fingerprint:
        console.print("[yellow]![/] the runs come from different machines; latency and cost are not comparable")


def history(metric, experiment, plot, config, override, output_dir, tracking_uri, as_json) -> None:
    with usage_errors():
        _, _, store, uri, _ = _context(config, override, output_dir, tracking_uri)
        rows = pipeline.tracker_for(store.output_dir, uri).history(metric, experiment)
    if not rows:
        _say(f"error: no finished run has metric {metric!r}; check the name with `paddlectl eval compare`")
        raise typer.Exit(USAGE_ERROR)
    path = history_plot(rows, metric, plot or store.output_dir / f"history-{metric}.png")
    if as_json:
        sys.stdout.write(json.dumps({"metric": metric, "rows": rows, "plot": str(path)}) + "\n")
        return
    table = Table(title=f"{escape(metric)} over time")
    for column in ("start (UTC)", "run", "model", metric):
        table.add_column(escape(column))
    for r in rows:
        when = dt.datetime.fromtimestamp(r["start_time"] / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(when, escape(r["run_id"]), escape(r["model"]), _fmt(r["value"]))
    console.print(table)
    _say(f"wrote {path}")


def training(run, baseline, max_metric_drop, max_divergence, as_json) -> None:
    with usage_errors():
        result = compare_training(run, baseline, max_metric_drop, max_divergence)
    if as_json:
        sys.stdout.write(json.dumps(dataclasses.asdict(result)) + "\n")
    else:
        mark = {0: "[green]pass[/]", 1: "[red]regression[/]", 3: "[yellow]inconclusive[/]"}[result.verdict]
        value = "-" if result.value is None else f"{result.value:.4f}"
        base = "-" if result.baseline_value is None else f"{result.baseline_value:.4f}"
        gap = "-" if result.divergence is None else f"{result.divergence:.4f}"
        console.print(
            f"{mark}: {escape(result.reason)}\n  {result.indicator}: {value} (baseline {base}); "
            f"loss-curve divergence {gap} over {result.common_steps} common steps"
        )
    if result.verdict:
        raise typer.Exit(result.verdict)
