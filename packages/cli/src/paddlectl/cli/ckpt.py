"""``paddlectl ckpt merge DIR -o OUT``: a distributed checkpoint (one shard per rank plus
``metadata.json``) written as one ordinary safetensors file.

Exit codes: 0 written, 2 a damaged or inconsistent checkpoint (a shard that disagrees with its
metadata, a failed checksum, a missing file: one line on stderr, nothing written).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from .output import console, usage_errors


class Action(StrEnum):
    merge = "merge"


def ckpt_command(
    action: Annotated[Action, typer.Argument(help="What to do: merge.")],
    directory: Annotated[str, typer.Argument(help="The distributed checkpoint directory.")],
    out: Annotated[str, typer.Option("-o", "--out", help="The safetensors file to write.")],
) -> None:
    """Merge a distributed checkpoint's shards into one ordinary safetensors file."""
    from paddlectl.framework.distributed.checkpoint import merge

    with usage_errors():
        count = merge(directory, out)
    console.print(f"{count} tensors merged into {out}", markup=False, highlight=False)
