"""``paddlectl eval``: evaluate exported models, track them in MLflow, and gate candidates.

Exit codes: 0 pass/success, 1 regression, 2 usage or config error (bad option, unknown key,
missing run, unreachable store for a command that needs it), 3 inconclusive gate (no baseline,
too few samples, another machine). ``gate`` never exits 0 unless a real comparison passed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from paddlectl.framework.config import apply_override, load_config
from paddlectl.framework.errors import ConfigError, PaddlectlError

from . import coldstart, pipeline
from .errors import EvalHarnessError, TrackingUnavailable
from .evaluate import evaluate
from .plots import history_plot
from .predictor import open_predictor
from .settings import HarnessSettings, load_settings
from .store import LocalStore, write_json, write_text
from .task import load_task

USAGE_ERROR = 2

console = Console()
err_console = Console(stderr=True)

app = typer.Typer(
    name="eval",
    help="Evaluate exported models (accuracy, latency, memory, cost), track runs in MLflow, gate candidates.",
    no_args_is_help=True,
    add_completion=False,
)

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="Experiment YAML (Eval.harness section).")]
OverrideOpt = Annotated[list[str], typer.Option("--override", "-o", help="Key.sub=value, parsed as YAML.")]
OutputOpt = Annotated[
    Path | None, typer.Option("--output-dir", help="Local run store (default Eval.harness.output_dir).")
]
UriOpt = Annotated[
    str | None, typer.Option("--tracking-uri", help="MLflow tracking URI (default: SQLite under the output dir).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


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
    """Config (the -c file, else the one an exported model carries), settings, local store, tracking URI."""
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
    return config, settings, LocalStore(out), uri or settings.tracking_uri


def _say(message: str) -> None:
    err_console.print(message, markup=False, highlight=False, soft_wrap=True)


def _evaluate_and_log(config: dict[str, Any], settings: HarnessSettings, store: LocalStore, uri: str | None,
                      model: Path, task_spec: str | None) -> pipeline.Logged:  # fmt: skip
    spec = task_spec or (config.get("Global") or {}).get("task") or _served_task_name(model)
    task = load_task(spec, config, model)
    runner = open_predictor(model, settings.threads)
    cold = (lambda inputs: coldstart.measure(model, inputs, settings.threads)) if settings.cold_start else None
    report, acc = evaluate(
        task, runner, settings, model_path=model, config=pipeline.flat_config(config), cold_start=cold
    )
    run = pipeline.record(store, report, acc, task)
    _say(f"wrote {run.report_path}")
    logged = pipeline.log(run, store.output_dir, uri)
    if logged.warning:
        _say(f"warning: {logged.warning}")
    else:
        _say(f"logged MLflow run {logged.run_id}")
    return logged


def _served_task_name(model: Path) -> str:
    """The task an exported model was made for, recorded in it by ``paddlectl export``."""
    from paddlectl.framework.hapi.export import served_task_name
    from paddlectl.framework.jit.saved_model import read_model_dir

    try:
        return served_task_name(read_model_dir(model))
    except PaddlectlError as exc:
        raise ConfigError(f"no task given and {exc}; pass --task NAME or set Global.task in the config") from None


@app.callback(invoke_without_command=True)
def evaluate_without_subcommand(
    ctx: typer.Context,
    model: Annotated[Path | None, typer.Option("--model", "-m", help="Exported model to evaluate.")] = None,
    task: Annotated[
        str | None, typer.Option("--task", "-t", help="Task name or module:attribute (default Global.task).")
    ] = None,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006 - typer copies it
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    then_gate: Annotated[bool, typer.Option("--gate", help="Judge the new run against the champion.")] = False,
) -> None:
    """``paddlectl eval -c CFG --model OUT [--gate]`` is ``eval run`` (or ``eval gate --model``)."""
    if ctx.invoked_subcommand is not None:
        if model is not None or task is not None or then_gate:
            _say(
                "error: --model/--gate before a sub-command are not used; pass them after it (e.g. eval run --model DIR)"
            )
            raise typer.Exit(USAGE_ERROR)
        return
    if model is None:
        _say(
            "error: pass --model DIR (and -c CFG) to evaluate, or a sub-command: run, gate, promote, sync, compare, history"
        )
        raise typer.Exit(USAGE_ERROR)
    common = dict(
        model=model, task=task, config=config, override=override, output_dir=output_dir, tracking_uri=tracking_uri
    )
    if then_gate:
        gate_cmd(**common)
    else:
        run(**common)


@app.command()
def run(
    model: Annotated[Path, typer.Option("--model", "-m", help="Exported model directory or .onnx file.")],
    task: Annotated[
        str | None, typer.Option("--task", "-t", help="Task name or module:attribute (default Global.task).")
    ] = None,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006 - typer copies it
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate an exported model, write its report locally, log it to MLflow and register the model."""
    with usage_errors():
        cfg, settings, store, uri = _context(config, override, output_dir, tracking_uri, model)
        logged = _evaluate_and_log(cfg, settings, store, uri, model, task)
    report = logged.run.report()
    if as_json:
        sys.stdout.write(json.dumps({"local_id": report.local_id, "run_id": logged.run_id, "logged": logged.run_id is not None,
                                     "report": str(logged.run.report_path), "metrics": report.metrics}, default=str) + "\n")  # fmt: skip
    else:
        _metrics_table(f"{report.model_name} on {report.task}", {"run": report.metrics})


def _metrics_table(title: str, columns: dict[str, dict[str, float]]) -> None:
    table = Table(title=title)
    table.add_column("metric")
    for name in columns:
        table.add_column(name, justify="right")
    names = sorted(set().union(*(c.keys() for c in columns.values())))
    for metric in names:
        table.add_row(metric, *(_fmt(c.get(metric)) for c in columns.values()))
    console.print(table)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


@app.command(name="gate")
def gate_cmd(
    candidate: Annotated[str | None, typer.Option("--candidate", help="Run id (MLflow or local) to judge.")] = None,
    model: Annotated[
        Path | None, typer.Option("--model", "-m", help="Evaluate this exported model now and judge it.")
    ] = None,
    baseline: Annotated[
        str, typer.Option("--baseline", help="'champion' (the registry alias) or a run id.")
    ] = "champion",
    task: Annotated[str | None, typer.Option("--task", "-t", help="Task for --model (default Global.task).")] = None,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for gate.json and gate.md.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare a candidate with a baseline: thresholds plus a statistical latency test."""
    from . import gate  # scipy is paid for by the gate only

    if (candidate is None) == (model is None):
        _say("error: pass exactly one of --candidate RUN or --model DIR")
        raise typer.Exit(USAGE_ERROR)
    with usage_errors():
        cfg, settings, store, uri = _context(config, override, output_dir, tracking_uri, model)
        if model is not None:
            candidate = _evaluate_and_log(cfg, settings, store, uri, model, task).run.local_id
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
    result = gate.run_gate(cand_report, base_report, settings, base_label)
    result.candidate = cand_label
    result.reasons = reasons + result.reasons if base_report is not None else (reasons or result.reasons)
    folder = out or store.output_dir / "gates" / f"{cand_label}-vs-{base_label or 'none'}"
    write_json(folder / "gate.json", result.to_dict())
    write_text(folder / "gate.md", gate.to_markdown(result))
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


@app.command()
def promote(
    run_id: Annotated[str, typer.Argument(help="MLflow run id (or local id of a logged run).")],
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
) -> None:
    """Point the registered model's ``champion`` alias at the version this run registered."""
    with usage_errors():
        _, _, store, uri = _context(config, override, output_dir, tracking_uri)
        local = store.find(run_id)
        if local is not None and local.state().get("run_id"):
            run_id = local.state()["run_id"]
        name, version = pipeline.tracker_for(store.output_dir, uri).promote(run_id)
    console.print(f"{escape(name)} version {version} (run {escape(run_id)}) is now the champion")


@app.command(name="sync")
def sync_cmd(
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
) -> None:
    """Upload every local run that could not be logged (tracking store was unreachable)."""
    with usage_errors():
        _, _, store, uri = _context(config, override, output_dir, tracking_uri)
        done = pipeline.sync(store, uri)
    for logged in done:
        console.print(f"uploaded {escape(logged.run.local_id)} as MLflow run {escape(str(logged.run_id))}")
    console.print(f"{len(done)} run(s) uploaded; {len(store.pending())} still pending")


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="First run (MLflow or local id).")],
    run_b: Annotated[str, typer.Argument(help="Second run.")],
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Metrics of two runs side by side, with the difference."""
    with usage_errors():
        _, _, store, uri = _context(config, override, output_dir, tracking_uri)
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


@app.command()
def history(
    metric: Annotated[str, typer.Option("--metric", help="Metric name, e.g. accuracy or latency_p95_ms_bs1.")],
    experiment: Annotated[str | None, typer.Option("--experiment", help="Only this experiment (task/model).")] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="PNG path (default <output-dir>/history-METRIC.png).")
    ] = None,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A metric over time across finished runs: a table and a PNG plot."""
    with usage_errors():
        _, _, store, uri = _context(config, override, output_dir, tracking_uri)
        rows = pipeline.tracker_for(store.output_dir, uri).history(metric, experiment)
    if not rows:
        _say(f"error: no finished run has metric {metric!r}; check the name with `paddlectl eval compare`")
        raise typer.Exit(USAGE_ERROR)
    path = history_plot(rows, metric, plot or store.output_dir / f"history-{metric}.png")
    if as_json:
        sys.stdout.write(json.dumps({"metric": metric, "rows": rows, "plot": str(path)}) + "\n")
        return
    table = Table(title=f"{metric} over time")
    for column in ("start (UTC)", "run", "model", metric):
        table.add_column(column)
    for r in rows:
        when = dt.datetime.fromtimestamp(r["start_time"] / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(when, r["run_id"], escape(r["model"]), _fmt(r["value"]))
    console.print(table)
    _say(f"wrote {path}")
