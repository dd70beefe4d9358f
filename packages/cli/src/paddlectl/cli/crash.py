"""What a user sees when a command fails with an exception no command handled.

A typed error (the user's input is wrong) is one ``error:`` line and exit code 2, whichever
command or plugin raised it. Anything else is a bug of ours: one line says what failed, where the
full report (command, versions, traceback) was written and how to report it, exit code 1;
``paddlectl --debug`` or ``PADDLECTL_DEBUG=1`` prints the traceback instead.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

DEBUG_ENV = "PADDLECTL_DEBUG"
DEBUG_FLAG = "--debug"
INTERNAL_ERROR = 1


def debug_requested(argv: list[str]) -> bool:
    """``--debug`` among the root options (before the command's name), or PADDLECTL_DEBUG set."""
    if os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return True
    for arg in argv:
        if not arg.startswith("-"):
            return False
        if arg == DEBUG_FLAG:
            return True
    return False


def _command_words(argv: list[str]) -> str:
    words = []
    for arg in argv:
        if arg.startswith("-") or len(words) == 2:
            break
        words.append(arg)
    return " ".join(["paddlectl", *words])


def _is_user_error(exc: BaseException) -> bool:
    from .plugins import MissingProviderError

    # A PaddlectlError can only have been raised once the framework's errors module was imported.
    errors = sys.modules.get("paddlectl.framework.errors")
    typed = (MissingProviderError,) if errors is None else (MissingProviderError, errors.PaddlectlError)
    return isinstance(exc, typed)


def _report_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "paddlectl" / "crashes"


def write_report(exc: BaseException, argv: list[str]) -> Path:
    """The command line, the installed paddlectl versions and the traceback, in a new file."""
    from .plugins import installed_paddlectl

    versions = ", ".join(f"{n} {v}" for n, v in installed_paddlectl().items())
    text = (
        f"command: paddlectl {' '.join(argv)}\n"
        f"python: {platform.python_version()} on {platform.platform()}\n"
        f"packages: {versions}\n\n" + "".join(traceback.format_exception(exc))
    )
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-"
    try:
        folder = _report_dir()
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir())
    handle, path = tempfile.mkstemp(prefix=name, suffix=".txt", dir=folder)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    return Path(path)


def handle(exc: Exception, argv: list[str]) -> int:
    """Print what the user needs about ``exc`` (see the module's docstring); the exit code."""
    from .output import USAGE_ERROR, err_console, print_error

    if _is_user_error(exc):
        print_error(exc)
        return USAGE_ERROR
    if debug_requested(argv):
        traceback.print_exception(exc)
        return INTERNAL_ERROR
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    message = " ".join(str(exc).split())
    try:
        saved = f"full traceback in {write_report(exc, argv)}; please report this paddlectl bug with that file"
    except OSError as write_error:
        saved = f"the traceback could not be saved ({write_error}); please report this paddlectl bug"
    err_console.print(
        f"internal error: `{_command_words(argv)}` failed with {type(exc).__name__}: {message}{where}; {saved} "
        f"(rerun with {DEBUG_FLAG} to print the traceback here)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return INTERNAL_ERROR
