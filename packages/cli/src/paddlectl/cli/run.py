"""``paddlectl run [--check] SCRIPT [ARGS...]``: run a script written for PaddlePaddle, unmodified, on
paddlectl (``import paddle`` yields ``paddlectl.framework`` through an import alias), as
``python SCRIPT ARGS...`` would run it: its argv, ``__name__ == "__main__"``, its directory first on
``sys.path``, its exit code.

A failure prints one line with the script's file:line instead of a traceback: an API paddlectl
lacks is named as ``paddle.x.y``; any other error is the script's own, shown as Python names it.
``--check`` reads the script without running it and lists the paddle APIs it uses.

Top-level imports stay light: ``paddlectl --help`` imports this module, the framework is imported
only when a script runs or is checked.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import runpy
import sys
import traceback
import types
from pathlib import Path
from typing import Annotated

import typer

from .paddle_alias import is_alias, is_target, paddle_alias, to_alias

EXIT_FAILURE = 1
# Everything after SCRIPT is the script's, its own --json or --check included.
RUN_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}


def run_command(
    ctx: typer.Context,
    script: Annotated[str, typer.Argument(help="The Paddle script; every argument after it is passed to it.")],
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Do not run: list every paddle.* name the script uses and which ones paddlectl lacks. "
            "Exit 0 when all are present, 1 when some are missing.",
        ),
    ] = False,
    json_out: Annotated[
        str | None, typer.Option("--json", help="With --check: also write the list to this file.")
    ] = None,
    show_traceback: Annotated[
        bool, typer.Option("--traceback", help="When the script fails, print Python's traceback, not one line.")
    ] = False,
) -> None:
    """Run a PaddlePaddle script unmodified on paddlectl (`import paddle` is paddlectl), or --check it.

    On failure, one line names the paddle API paddlectl lacks (or the script's own error) and its file:line; exit 1.

    The script's own exit code passes through. Options go before SCRIPT; all after it belongs to the script.
    """
    from .output import USAGE_ERROR, print_error

    def usage(message: str) -> typer.Exit:
        print_error(message)
        return typer.Exit(USAGE_ERROR)

    if script.startswith("-"):
        raise usage(f"unknown option {script!r} for `paddlectl run`; its options go before the script")
    path = Path(script)
    if not path.exists():
        raise usage(f"script {script!r} does not exist")
    if check:
        if ctx.args:
            raise usage(
                f"--check takes no script arguments (got {' '.join(ctx.args)}); options such as --json go before "
                "the script: paddlectl run --check --json OUT SCRIPT"
            )
        raise typer.Exit(_check(path, json_out, usage))
    if json_out is not None:
        raise usage("--json goes with --check")
    try:
        _execute(path, ctx.args)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as exc:  # noqa: BLE001 - the script's failure, reported as one line
        if show_traceback:
            traceback.print_exception(type(exc), exc, _from_script(exc.__traceback__, path))
        else:
            print_error(describe_failure(exc, path))
        raise typer.Exit(EXIT_FAILURE) from None


def _execute(path: Path, args: list[str]) -> None:
    """Run the script as ``python path args`` would, with ``paddle`` aliased; SystemExit passes through."""
    saved_argv, saved_path0 = sys.argv, sys.path[0]
    sys.argv = [str(path), *args]
    sys.path[0] = str(path.resolve().parent)
    try:
        with paddle_alias():
            runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv, sys.path[0] = saved_argv, saved_path0


def describe_failure(exc: BaseException, script: Path) -> str:
    """One line: where in the script, and either the paddle API paddlectl lacks or the script's error."""
    frames = traceback.extract_tb(exc.__traceback__)
    at_script = next((f for f in reversed(frames) if _same_file(f.filename, script)), None)
    raiser = _raising_frame(frames)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_shown(exc.filename, script)}:{exc.lineno}: {type(exc).__name__}: {exc.msg}"
    where = f"{script}:{at_script.lineno}" if at_script is not None else str(script)
    elsewhere = (
        f" (in {_shown(raiser.filename, script)}:{raiser.lineno})"
        if raiser is not None and not _same_file(raiser.filename, script)
        else ""
    )
    api = missing_api(exc) if raiser is not None and not _ours(raiser.filename) else None
    if api is not None:
        return (
            f"{where}: {api} is not available in paddlectl{_suggestion(exc)}{elsewhere}; "
            f"`paddlectl run --check {script}` lists every paddle API the script uses"
        )
    return f"{where}: {type(exc).__name__}: {exc}{elsewhere}"


def missing_api(exc: BaseException) -> str | None:
    """The ``paddle.*`` name of a failed import or attribute lookup on paddlectl, else None."""
    if isinstance(exc, ModuleNotFoundError) and exc.name and is_alias(exc.name):
        return exc.name
    if isinstance(exc, ImportError) and exc.name and is_target(exc.name):
        found = re.match(r"cannot import name '([^']+)'", str(exc))  # from paddle.x import y
        return f"{to_alias(exc.name)}.{found.group(1)}" if found else None
    if isinstance(exc, AttributeError) and exc.name:
        owner = _public_name(exc.obj)
        return f"{owner}.{exc.name}" if owner else None
    return None


def _public_name(obj) -> str | None:
    """``paddle.nn`` for the module, ``paddle.Tensor`` for the class or one of its instances: the
    paddle name of a paddlectl module or class. None for anything else, user subclasses included
    (their missing attribute may be the script's own)."""
    if isinstance(obj, types.ModuleType):
        return to_alias(obj.__name__) if is_target(obj.__name__) else None
    cls = obj if isinstance(obj, type) else type(obj)
    if not is_target(cls.__module__):
        return None
    exposing = [
        name
        for name, module in list(sys.modules.items())
        if is_target(name) and "._" not in name and getattr(module, cls.__name__, None) is cls
    ]
    home = min(exposing, key=lambda n: (n.count("."), n), default=cls.__module__)
    return f"{to_alias(home)}.{cls.__name__}"


def _suggestion(exc: BaseException) -> str:
    """`` (did you mean 'shape'?)`` for an attribute that is a near-miss of one paddlectl has."""
    if not isinstance(exc, AttributeError):
        return ""
    close = difflib.get_close_matches(exc.name, [n for n in dir(exc.obj) if not n.startswith("_")], n=1, cutoff=0.85)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _raising_frame(frames: traceback.StackSummary):
    """The frame whose code failed: import machinery and ``__getattr__`` hooks stand for their caller."""
    for frame in reversed(frames):
        if not frame.filename.startswith("<frozen") and frame.name != "__getattr__":
            return frame
    return None


def _ours(filename: str) -> bool:
    """A file of paddlectl itself: an error raised there is our defect, never a missing API."""
    import paddlectl

    real = os.path.realpath(filename)
    return any(real.startswith(os.path.realpath(root) + os.sep) for root in paddlectl.__path__)


def _same_file(filename: str, script: Path) -> bool:
    return os.path.realpath(filename) == os.path.realpath(script)


def _shown(filename: str, script: Path) -> str:
    """The script as the user wrote it, another file relative to the working directory when inside it."""
    if _same_file(filename, script):
        return str(script)
    relative = os.path.relpath(filename)
    return filename if relative.startswith("..") else relative


def _from_script(tb: types.TracebackType | None, script: Path) -> types.TracebackType | None:
    """The traceback from the script's first frame on, as ``python script.py`` would print it."""
    start = tb
    while start is not None and not _same_file(start.tb_frame.f_code.co_filename, script):
        start = start.tb_next
    return start or tb


def _check(path: Path, json_out: str | None, usage) -> int:
    """List the script's paddle names as a table (and JSON); 1 when paddlectl lacks some."""
    from rich.table import Table

    from paddlectl.framework.utils.fileio import atomic_write

    from .api_check import check_source
    from .output import console, escape

    try:
        uses = check_source(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise usage(f"cannot read {path}: {exc}") from None
    except SyntaxError as exc:
        raise usage(f"{path}:{exc.lineno}: not Python ({exc.msg}); fix the script before checking it") from None
    missing = [u for u in uses if u.missing]
    table = Table(title=f"paddle APIs used by {escape(str(path))}")
    for column in ("paddle API", "line(s)", "in paddlectl"):
        table.add_column(column)
    for u in uses:
        status = "[green]yes[/]" if not u.missing else "[red]missing[/]"
        if u.missing and u.missing != u.name:
            status += f": {escape(u.missing)}"
        table.add_row(escape(u.name), ", ".join(map(str, u.lines)), status)
    console.print(table)
    if json_out:
        report = {
            "script": str(path),
            "apis": [{"name": u.name, "lines": list(u.lines), "missing": u.missing} for u in uses],
            "missing": [u.name for u in missing],
        }
        with atomic_write(json_out, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    if missing:
        console.print(f"[red]{len(missing)} of {len(uses)} paddle APIs are missing from paddlectl[/]", highlight=False)
        return EXIT_FAILURE
    if not uses:
        console.print("the script names no paddle API", highlight=False)
    else:
        console.print(f"[green]paddlectl has all {len(uses)} paddle APIs the script names[/]", highlight=False)
    return 0
