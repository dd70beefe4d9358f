"""``paddlectl serve keys add|revoke|list``: manage the API key file the server reads.

``add`` prints the new key once, as its last line (scripts take ``| tail -1``); the file keeps
only its hash, so a lost key is revoked and replaced, never recovered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from . import keys as keyfile
from .access import usage_path_for

app = typer.Typer(name="keys", help="Create, revoke and list the API keys of `paddlectl serve --keys FILE`.",
                  add_completion=False, rich_markup_mode=None, no_args_is_help=True)  # fmt: skip
KeysOption = Annotated[Path, typer.Option("--keys", help="The key file (JSON, created if missing, mode 0600).")]


def _usage_errors():
    from paddlectl.cli.output import usage_errors

    return usage_errors()


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="Who or what the key is for (letters, digits, '_', '.', '-').")],
    keys: KeysOption,
    env: Annotated[str, typer.Option("--env", help="Environment the key is for: dev, test or prod.")],
    rate: Annotated[str | None, typer.Option("--rate", help="Rate limit, e.g. 10/s, 600/min (token bucket).")] = None,
    quota: Annotated[str | None, typer.Option("--quota", help="Requests per UTC day, e.g. 10000/day.")] = None,
    budget: Annotated[str | None, typer.Option("--budget", help="Cost per UTC day (the cost model's currency), e.g. 5.00/day.")] = None,
) -> None:  # fmt: skip
    """Create a key; it is printed once, as the last line, and stored only as its SHA-256."""
    with _usage_errors():
        record, key = keyfile.add(keys, name, env, rate, quota, budget)
    limits = ", ".join(_limits(record)) or "no limits"
    typer.echo(f"key {record.name!r} ({record.env}; {limits}) added to {keys}; it is shown only now:")
    typer.echo(key)


@app.command("revoke")
def revoke(name: Annotated[str, typer.Argument(help="The key's name.")], keys: KeysOption) -> None:
    """Revoke a key: a running server answers it 403 from its next request on."""
    with _usage_errors():
        record = keyfile.revoke(keys, name)
    typer.echo(f"key {record.name!r} revoked at {record.revoked}")


@app.command("list")
def list_keys(keys: KeysOption) -> None:
    """Names, environments, limits, state and today's usage (never the keys or their hashes)."""
    from .limits import Limits

    with _usage_errors():
        found = keyfile.load(keys)
        usage = Limits(usage_path_for(Path(keys)))
    table = Table("name", "env", "limits", "created", "state", "today", title=str(keys))
    for record in found.keys.values():
        used, spent = usage.usage(record.name)
        state = f"revoked {record.revoked}" if record.revoked else "active"
        table.add_row(record.name, record.env, ", ".join(_limits(record)) or "-", record.created, state,
                      f"{used} requests, {spent:.4g} spent")  # fmt: skip
    Console().print(table)


def _limits(record: keyfile.KeyRecord) -> list[str]:
    out = [f"rate {record.rate}"] if record.rate else []
    out += [f"quota {record.quota_per_day}/day"] if record.quota_per_day is not None else []
    out += [f"budget {record.budget_per_day:g}/day"] if record.budget_per_day is not None else []
    return out
