"""Runs a shard of example blocks under real Paddle ("paddle") or under paddlectl.framework
imported as ``paddle`` ("ours"); one JSON line per block, flushed, so a crash loses nothing done."""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import signal
import sys
import tempfile
import types
import warnings


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import paddle.X.Y`` gives ``paddlectl.framework.X.Y``, or the attribute ``Y`` of the
    framework's ``X`` where Paddle exposes a namespace as an attribute."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "paddle" or fullname.startswith("paddle."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        try:
            return importlib.import_module("paddlectl.framework" + spec.name[len("paddle") :])
        except ModuleNotFoundError:
            parent, _, leaf = spec.name.rpartition(".")
            found = getattr(importlib.import_module(parent), leaf, None) if parent else None
            if isinstance(found, types.ModuleType):
                return found
            raise ModuleNotFoundError(f"No module named {spec.name!r}") from None

    def exec_module(self, module):
        pass


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("the example ran past its time limit")


def _run(statements: list[str], timeout_s: int) -> tuple[list[str], str | None]:
    namespace: dict = {"__name__": "__main__"}
    outputs = []
    signal.alarm(timeout_s)
    try:
        for source in statements:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(source, "<example>", "single"), namespace)
            outputs.append(buffer.getvalue())
    except BaseException as exc:  # noqa: BLE001 - the example's own failure (SystemExit too) is the measurement
        first = (str(exc).strip().splitlines() or [""])[0]
        return outputs, f"{type(exc).__name__}: {first}"[:240]
    finally:
        signal.alarm(0)
    return outputs, None


def _reset(paddle) -> None:
    """Undo what one example may leave behind for the next."""
    with contextlib.suppress(Exception):
        paddle.disable_static()
    with contextlib.suppress(Exception):
        paddle.set_default_dtype("float32")
    with contextlib.suppress(Exception):
        paddle.set_grad_enabled(True)  # an example may switch gradients off with a bare call
    with contextlib.suppress(Exception):  # Paddle's defaults: a set_printoptions example changes them
        paddle.set_printoptions(precision=8, threshold=1000, edgeitems=3, sci_mode=False, linewidth=80)


def main() -> None:
    side, source, out, timeout_s = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _on_alarm)
    if side == "ours":
        sys.meta_path.insert(0, _Alias())
    import paddle

    examples = json.loads(open(source).read())
    os.chdir(tempfile.mkdtemp(prefix="api-examples-"))  # examples save files
    with open(out, "a") as sink:
        for example in examples:
            outputs, error = _run(example["source"], timeout_s)
            _reset(paddle)
            record = {"id": example["id"], "status": "error" if error else "ok", "outputs": outputs, "error": error}
            if side == "paddle" and not error:  # run again: reproducible output or random?
                again, error2 = _run(example["source"], timeout_s)
                _reset(paddle)
                record["stable"] = error2 is None and again == outputs
            sink.write(json.dumps(record) + "\n")
            sink.flush()


if __name__ == "__main__":
    main()
