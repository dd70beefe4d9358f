"""``paddlectl serve --model NAME=DIR ...``: serve exported models; ``serve keys`` and ``serve bench``
are its sub-commands. Exit code 2 for a usage error (a bad --model, serve.yml, key file or TLS
file), named in one line before anything starts listening."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = "Serve exported models over HTTP (Open Inference Protocol v2), with keys, limits and batching."
app = typer.Typer(name="serve", help=HELP, add_completion=False, rich_markup_mode=None)


@app.callback(invoke_without_command=True)
def serve_command(
    ctx: typer.Context,
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="NAME=DIR: a model `paddlectl export` wrote; repeat it.")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8866,
    keys: Annotated[Path | None, typer.Option("--keys", help="API key file (`paddlectl serve keys add`).")] = None,
    env: Annotated[
        str | None, typer.Option("--env", help="Accept only keys of this environment: dev, test, prod.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="serve.yml: server limits and per-model settings.")
    ] = None,
    ssl_certfile: Annotated[Path | None, typer.Option("--ssl-certfile", help="TLS certificate (PEM).")] = None,
    ssl_keyfile: Annotated[Path | None, typer.Option("--ssl-keyfile", help="TLS private key (PEM).")] = None,
) -> None:
    """Serve models until stopped (Ctrl-C or SIGTERM finishes in-flight requests first)."""
    if ctx.invoked_subcommand is not None:
        return
    from paddlectl.cli.output import usage_errors

    from .server import serve
    from .service import preflight
    from .settings import load_settings

    with usage_errors():
        settings = load_settings(model or [], config)
        preflight(settings)
        serve(settings, host, port, keys, env, ssl_certfile, ssl_keyfile)


from .bench import bench  # noqa: E402  (sub-commands after the callback they hang off)
from .keys_cli import app as keys_app  # noqa: E402

app.add_typer(keys_app, name="keys")
app.command("bench")(bench)
