"""The background compiler (see ``kernels.background``): a process that compiles kernels into
Numba's disk cache for another process.

It reads one request per line on stdin, ``{"address": ..., "signature": "..."}`` (the signature as
the repr of Numba types, which the parent process wrote), compiles it, and answers one line on
stdout, ``{"key": <the request line>, "ok": true}`` or with ``"ok": false, "error": "..."``. It runs
at a lower priority than the process it serves, and exits at the end of its input, after the last
request: when the parent exits, what it asked for still gets compiled.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import numba
from numba.core import types

from .module_file import load_module

_TYPES = {**vars(types), "__builtins__": {}}


def resolve(address: dict):
    """The dispatcher an address names: ``{"path", "name"}`` a generated kernel module's function,
    ``{"module", "name"[, "variant"]}`` a module-level kernel (``variant``: which of a
    ``SizeDispatched``'s two)."""
    if "path" in address:
        target = load_module(address["path"])
    else:
        target = importlib.import_module(address["module"])
    for part in address["name"].split("."):
        target = getattr(target, part)
    variant = address.get("variant")
    return getattr(target, variant) if variant else target


def signature(text: str) -> tuple:
    """Numba types from their repr (``Array(float32, 4, 'C', False, aligned=True)``, ``int64``...)."""
    value = eval(text, _TYPES)  # noqa: S307 - the parent's own repr of Numba types, no builtins reachable
    if not isinstance(value, tuple) or not all(isinstance(t, types.Type) for t in value):
        raise ValueError(f"not a tuple of Numba types: {text!r}")
    return value


def compile_request(line: str) -> dict:
    request = json.loads(line)
    dispatcher = resolve(request["address"])
    if not isinstance(dispatcher, numba.core.dispatcher.Dispatcher):
        raise TypeError(f"{request['address']} is not a Numba dispatcher")
    dispatcher.compile(signature(request["signature"]))
    return {"key": line, "ok": True}


def main() -> None:
    try:
        os.nice(10)
    except OSError:
        pass
    for raw in sys.stdin:
        line = raw.rstrip("\n")
        if not line:
            continue
        try:
            answer = compile_request(line)
        except Exception as exc:  # noqa: BLE001 - every failure is an answer; the parent compiles itself
            answer = {"key": line, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        try:
            print(json.dumps(answer), flush=True)
        except (BrokenPipeError, OSError):  # the parent has exited: keep compiling what it asked for
            pass


if __name__ == "__main__":
    main()
