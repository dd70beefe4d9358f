"""``paddlectl eval``: evaluate exported models, track them in MLflow, and gate candidates.

Exit codes: 0 pass/success, 1 regression (or a run whose failed inputs exceed
``Eval.harness.max_error_rate``, or a promotion refused), 2 usage or config error (bad option,
unknown key, missing run, unreachable store for a command that needs it), 3 inconclusive gate
(no baseline, too few samples, another machine). ``gate`` never exits 0 unless a real
comparison passed.

Only the options live here; the work is in ``commands``, imported once a command's arguments
are parsed, so a missing option is reported at once rather than after MLflow and the framework
are imported (tens of seconds on a busy machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

USAGE_ERROR = 2

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
TaskOpt = Annotated[
    str | None, typer.Option("--task", "-t", help="Task name or module:attribute (default Global.task).")
]


def _usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(USAGE_ERROR)


@app.callback(invoke_without_command=True)
def evaluate_without_subcommand(
    ctx: typer.Context,
    model: Annotated[Path | None, typer.Option("--model", "-m", help="Exported model to evaluate.")] = None,
    task: TaskOpt = None,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006 - typer copies it
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    then_gate: Annotated[bool, typer.Option("--gate", help="Judge the new run against the champion.")] = False,
) -> None:
    """``paddlectl eval -c CFG --model OUT [--gate]`` is ``eval run`` (or ``eval gate --model``)."""
    if ctx.invoked_subcommand is not None:
        if model is not None or task is not None or then_gate:
            _usage("--model/--gate before a sub-command are not used; pass them after it (e.g. eval run --model DIR)")
        return
    if model is None:
        _usage(
            "pass --model DIR (and -c CFG) to evaluate, or a sub-command: run, gate, promote, sync, compare, history"
        )
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
    task: TaskOpt = None,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006 - typer copies it
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate an exported model, write its report locally, log it to MLflow and register the model.

    Exits 1 when more inputs failed than Eval.harness.max_error_rate allows (default 0).
    """
    from . import commands

    commands.run(model, task, config, override, output_dir, tracking_uri, as_json)


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
    """Compare a candidate with a baseline: the main metric, the error rate, thresholds and a latency test."""
    if (candidate is None) == (model is None):
        _usage("pass exactly one of --candidate RUN or --model DIR")
    from . import commands

    commands.gate(candidate, model, baseline, task, config, override, output_dir, tracking_uri, out, as_json)


@app.command()
def promote(
    run_id: Annotated[str, typer.Argument(help="MLflow run id (or local id of a logged run).")],
    force: Annotated[
        bool, typer.Option("--force", help="Promote even a run with failed inputs or without its main metric.")
    ] = False,
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
) -> None:
    """Point the registered model's ``champion`` alias at the version this run registered."""
    from . import commands

    commands.promote(run_id, force, config, override, output_dir, tracking_uri)


@app.command(name="sync")
def sync_cmd(
    config: ConfigOpt = None,
    override: OverrideOpt = [],  # noqa: B006
    output_dir: OutputOpt = None,
    tracking_uri: UriOpt = None,
) -> None:
    """Upload every local run that could not be logged (tracking store was unreachable)."""
    from . import commands

    commands.sync(config, override, output_dir, tracking_uri)


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
    from . import commands

    commands.compare(run_a, run_b, config, override, output_dir, tracking_uri, as_json)


@app.command()
def training(
    run: Annotated[Path, typer.Argument(help="Output directory of the training run to judge.")],
    baseline: Annotated[Path, typer.Option("--baseline", help="Output directory of the baseline run (e.g. FP32).")],
    max_metric_drop: Annotated[float, typer.Option(help="Largest allowed drop of the main indicator.")] = 0.005,
    max_divergence: Annotated[float, typer.Option(help="Largest allowed mean relative loss-curve gap.")] = 0.1,
    as_json: JsonOpt = False,
) -> None:
    """A training run (an AMP one) against its baseline: final metric and loss-curve divergence."""
    from . import commands

    commands.training(run, baseline, max_metric_drop, max_divergence, as_json)


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
    from . import commands

    commands.history(metric, experiment, plot, config, override, output_dir, tracking_uri, as_json)
