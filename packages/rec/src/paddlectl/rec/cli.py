"""``paddlectl rec convert PADDLEREC.yaml --model DeepFM -o OUT.yml``: a PaddleRec ``config.yaml``
as a ``rec.ctr`` experiment config that ``paddlectl train -c OUT.yml`` runs.
``paddlectl rec manifest -m MODEL -o MODEL.asset.yaml``: the licence manifest of an exported model,
its training data's licence inline, for ``paddlectl license audit --assets``.

Exit codes: 0 written, 2 bad input (the file, a key, a value; the message names it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from paddlectl.cli.output import console, usage_errors

HELP = "Recommendation: convert PaddleRec configs; write an exported model's licence manifest."
app = typer.Typer(name="rec", help=HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None)


@app.callback()
def main() -> None:
    """Recommendation suite commands (the tasks themselves run under `paddlectl train/export/eval/predict`)."""


@app.command("convert")
def convert_command(
    source: Annotated[Path, typer.Argument(help="PaddleRec config.yaml (runner + hyper_parameters).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the rec.ctr config.")],
    model: Annotated[
        str | None, typer.Option("--model", help="DeepFM, WideDeep or DCN (default: hyper_parameters.model).")
    ] = None,
) -> None:
    """Write a PaddleRec config.yaml as our Global/Architecture/Optimizer/Train/Eval config."""
    from paddlectl.framework.config import save_config

    from .config import load_paddlerec
    from .ctr.task import CtrTask

    with usage_errors():
        config, ignored = load_paddlerec(source, model)
        CtrTask().check_config(config)
        save_config(config, output)
    if ignored:
        console.print(f"ignored (PaddleRec runtime only): {', '.join(ignored)}", markup=False, highlight=False)
    console.print(f"wrote {output}; run it with: paddlectl train -c {output}", markup=False, highlight=False)


@app.command("manifest")
def manifest_command(
    model: Annotated[Path, typer.Option("-m", "--model", help="Model directory written by `paddlectl export`.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the asset.yaml.")],
    license: Annotated[  # noqa: A002 - the option's name
        str, typer.Option("--license", help="The model's own licence (SPDX id); NOASSERTION when not stated.")
    ] = "NOASSERTION",
) -> None:
    """Write an exported model's asset.yaml: its files' sha256 and its training data's licence as lineage."""
    import yaml

    from paddlectl.framework.utils.fileio import atomic_write

    from .licences import model_manifest

    with usage_errors():
        data = model_manifest(model, output, license)
        with atomic_write(output, "w", encoding="utf-8") as handle:
            yaml.safe_dump(data, handle, sort_keys=False, allow_unicode=True)
    console.print(
        f"wrote {output}; audit it with: paddlectl license audit --policy commercial-saas --assets {output}",
        markup=False,
        highlight=False,
    )
