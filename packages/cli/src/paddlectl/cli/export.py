"""``paddlectl export [-c CFG] --weights DIR|FILE.pdparams -o OUT [--verify] [--print-ir] [--format native|onnx]``:
trained weights -> an inference model directory that carries the task's pre/post-processing and
the resolved config (or an ONNX file with the processing in its metadata). Without ``-c`` the config
is the one saved with the weights: the checkpoint's, or the ``config.yml`` beside a ``.pdparams``.

Exit codes: 0 exported, 2 bad input (config, task, weights, data; nothing written), 1 when
``--verify`` finds the exported model disagreeing with the trained one (nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .output import console, escape, print_error, usage_errors
from .train import resolve_config, task_for


def _config_beside(weights_file: Path) -> str:
    """The config saved beside a ``.pdparams`` file (a checkpoint directory holds both)."""
    from paddlectl.framework.errors import ConfigError
    from paddlectl.framework.hapi.checkpoint_dir import CONFIG_FILE

    config = weights_file.parent / CONFIG_FILE
    if not config.is_file():
        raise ConfigError(
            f"weights file {str(weights_file)!r} has no {CONFIG_FILE} beside it to say what model it holds; "
            "pass the config it was trained with: -c CONFIG.yml"
        )
    return str(config)


def export_command(
    weights: Annotated[
        str, typer.Option("--weights", "-w", help="Checkpoint directory (e.g. output/run/best) or .pdparams.")
    ],
    output: Annotated[str, typer.Option("-o", "--output", help="Directory to write the inference model to.")],
    config: Annotated[
        str | None, typer.Option("-c", "--config", help="Experiment YAML (default: the one saved with the weights).")
    ] = None,
    override: Annotated[list[str], typer.Option("--override", "-O", help="Key.sub=value, value parsed as YAML.")] = [],  # noqa: B006 - typer copies it
    verify: Annotated[
        bool,
        typer.Option("--verify", help="Check traced and served outputs against the trained model on eval samples."),
    ] = False,
    print_ir: Annotated[bool, typer.Option("--print-ir", help="Print the exported program.")] = False,
    format: Annotated[  # noqa: A002 - the option's name
        str,
        typer.Option(
            "--format",
            help="native (a model directory) or onnx (an ONNX file: opset 17, or the newer one an op needs).",
        ),
    ] = "native",
) -> None:
    """Export trained weights as an inference model that `paddlectl predict` runs without a config."""
    from paddlectl.framework.hapi.export import VerificationError, export
    from paddlectl.framework.static.printer import print_program

    with usage_errors():
        if config is None and Path(weights).is_file():
            config = _config_beside(Path(weights))
        resolved = resolve_config(config, override, weights if config is None else None)
        task = task_for(resolved)
        try:
            result = export(task, resolved, weights, output, verify=verify, format=format)
        except VerificationError as exc:
            print_error(exc)
            raise typer.Exit(1) from None
    meta = result.saved.meta
    if print_ir:
        console.print(print_program(result.saved.program), markup=False, highlight=False)
    table = Table(title=escape(f"exported {task.name} model: {Path(result.path)}"))
    for column in ("", "name", "shape", "dtype"):
        table.add_column(column)
    for kind in ("inputs", "outputs"):
        for spec in meta[kind]:
            table.add_row(kind[:-1], escape(spec["name"]), escape(str(spec["shape"])), escape(spec["dtype"]))
    console.print(table)
    if result.verification:
        worst = max(r["max_abs_diff"] for r in result.verification)
        checks = ", ".join(r["output"] for r in result.verification)
        console.print(f"[green]verified[/] ({escape(checks)}): max |diff| {worst:.3g}", highlight=False)
