"""``paddlectl seg synth --out DIR --n N`` (a generated set in PaddleSeg's layout) and
``paddlectl seg predict --model M -i IMAGE... --out DIR`` (label maps, palette PNGs, overlays).

Exit codes: 0 done, 2 bad input (a path, an image, a model; a message names it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

USAGE_ERROR = 2
console = Console()
err_console = Console(stderr=True)

HELP = "Semantic segmentation: generate a labelled set, or segment images with an exported model."
app = typer.Typer(name="seg", help=HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None)


def _run(action, *args):
    """``action(*args)``; a typed error (the user's mistake) becomes one line on stderr and exit 2."""
    from paddlectl.framework.errors import PaddlectlError

    try:
        return action(*args)
    except PaddlectlError as exc:
        err_console.print(f"error: {' '.join(str(exc).split())}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(USAGE_ERROR) from None


@app.command("synth")
def synth_command(
    out: Annotated[Path, typer.Option("--out", help="Directory for images/, labels/, file_list.txt, labels.txt.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of scenes.")],
    seed: Annotated[
        int, typer.Option("--seed", help="Scenes depend only on (seed, index): use another seed for a held-out set.")
    ] = 0,
    size: Annotated[int, typer.Option("--size", min=32, help="Image side in pixels.")] = 320,
) -> None:
    """Generate scenes (digits, letters, shapes on textures) with semantic label PNGs."""
    from .synth import generate_seg_set

    path = _run(generate_seg_set, out, n, seed, (size, size))
    console.print(f"file list: {path}", highlight=False, markup=False)


@app.command("predict")
def predict_command(
    model: Annotated[str, typer.Option("--model", "-m", help="A seg.semantic model written by `paddlectl export`.")],
    inputs: Annotated[list[Path], typer.Option("--input", "-i", help="Image files (repeat -i for several).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the PNGs and predictions.json.")] = Path("seg_out"),
    weight: Annotated[float, typer.Option("--weight", min=0.0, max=1.0, help="Image share of the overlay.")] = 0.6,
) -> None:
    """Per image: <name>_label.png (class ids), <name>_pseudo.png (palette), <name>_overlay.png, at the image's size."""
    from .predict import predict_files

    records = _run(predict_files, model, inputs, out, weight)
    with (out / "predictions.json").open("w", encoding="utf-8") as fh:
        json.dump(records, fh, indent=1)
    console.print(f"{len(records)} images segmented: {out}", highlight=False, markup=False)
