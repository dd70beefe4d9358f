"""The code examples of Paddle 3.3.1's ``paddle.distribution`` docstrings, replayed with the import
changed to paddlectl: every one must run, and every one whose printed numbers do not come from a
random draw (Paddle's generator is not ours) or a ``doctest: +SKIP`` block must print Paddle's
numbers within 1e-4."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import sys

import numpy as np

import paddlectl.framework as ours
from paddlectl.framework.distribution.kl import _TABLE as KL_TABLE

RANDOM = re.compile(r"\.r?sample\(|paddle\.(rand|randn|randint|uniform|normal|multinomial|bernoulli|poisson)\(")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
BLOCK = re.compile(r"\.\. code-block:: python\n\n(.*?)(?=\n\S|\Z)", re.S)


def _examples(module) -> dict[str, str]:
    """``{label: code}`` for each docstring example of ``module``'s public names and their methods."""
    found: dict[str, str] = {}
    for name in sorted(set(module.__all__)):
        obj = getattr(module, name)
        members = [(name, obj)]
        if inspect.isclass(obj):
            for attr, member in inspect.getmembers(obj):
                fn = member.fget if isinstance(member, property) else member
                if inspect.isfunction(fn) and (not attr.startswith("_") or attr == "__init__"):
                    members.append((f"{name}.{attr}", fn))
        for label, member in members:
            for i, block in enumerate(BLOCK.findall(inspect.getdoc(member) or "")):
                lines = [line.strip() for line in block.splitlines()]
                code = "\n".join(line[4:] for line in lines if line[:4] in (">>> ", "... ") or line in (">>>", "..."))
                if code and code not in found.values():
                    found[f"{label}#{i}"] = code
    return found


def _printed(code: str, framework) -> str:
    framework.seed(1)
    out = io.StringIO()
    # register_kl's example registers a stub for (Beta, Beta) in either library: keep it out of other tests
    table = KL_TABLE if framework is ours else sys.modules["paddle.distribution.kl"]._REGISTER_TABLE
    saved = dict(table)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})  # noqa: S102 - Paddle's own examples
    finally:
        table.clear()
        table.update(saved)
    return out.getvalue()


def _aliased(code: str) -> str:
    code = re.sub(r"^import paddle$", "import paddlectl.framework as paddle", code, flags=re.M)
    return re.sub(r"^from paddle(\.| )", r"from paddlectl.framework\1", code, flags=re.M)


def test_docstring_examples_run_and_print_paddles_numbers(real_paddle):
    examples = _examples(real_paddle.distribution)
    assert len(examples) >= 60, f"collected only {len(examples)} examples"
    failed, differ, compared = [], [], 0
    for label, code in examples.items():
        expected = _printed(code, real_paddle)
        try:
            got = _printed(_aliased(code), ours)
        except Exception as exc:  # noqa: BLE001 - each failing example is reported by name
            failed.append(f"{label}: {type(exc).__name__}: {exc}")
            continue
        if RANDOM.search(code) or "doctest: +SKIP" in code:
            continue
        compared += 1
        a, b = [float(x) for x in NUMBER.findall(got)], [float(x) for x in NUMBER.findall(expected)]
        if len(a) != len(b) or not np.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True):
            differ.append(f"{label}:\n  ours   {got!r}\n  paddle {expected!r}")
    print(
        f"\n{len(examples) - len(failed)}/{len(examples)} examples run; {compared - len(differ)}/{compared} deterministic match"
    )
    assert not failed, "examples that fail:\n" + "\n".join(failed)
    assert not differ, "examples printing other numbers:\n" + "\n".join(differ)
