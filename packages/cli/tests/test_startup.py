"""Start-up stays light: the root help and --version import no framework, no command module and no
plugin; a plugin's own help imports that plugin only (timings: benchmarks/cli_startup.py)."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.cli.plugins import commands
from paddlectl.cli.registry import BUILTINS

HEAVY = ("numba", "numpy", "mlflow", "paddlectl.framework", "paddlectl.eval_harness", "paddlectl.license_audit")
COMMAND_MODULES = tuple(sorted({spec.module for spec in BUILTINS.values()}))

# Runs paddlectl's console-script entry point in a fresh interpreter, then lists the modules it imported.
PROBE = """
import json, sys
sys.argv = ["paddlectl", *json.loads(sys.argv[1])]
from paddlectl.cli.app import main
code = None
try:
    main()
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run(*args: str) -> tuple[int, set[str], str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    *output, report = proc.stdout.strip().splitlines()
    found = json.loads(report)
    return found["code"], set(found["modules"]), "\n".join(output)


def _loaded(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_importing_the_app_imports_no_framework_numba_numpy_or_mlflow():
    code = "import sys, paddlectl.cli.app; print('\\n'.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _loaded(set(proc.stdout.split()), HEAVY + COMMAND_MODULES) == []


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_command(flag):
    code, modules, output = _run(flag)
    assert code in (0, None)
    assert _loaded(modules, HEAVY + COMMAND_MODULES + ("paddlectl.compat_matrix",)) == []
    if flag == "--help":
        for name in (*BUILTINS, *commands()):
            assert f" {name} " in output, name


def test_a_plugins_help_imports_that_plugin_only():
    if "compat" not in commands():
        pytest.skip("paddlectl-compat-matrix is not installed")
    code, modules, output = _run("compat", "--help")
    assert code in (0, None)
    assert "Usage: paddlectl compat" in output
    assert _loaded(modules, ("paddlectl.compat_matrix",)) != []
    assert _loaded(modules, HEAVY + COMMAND_MODULES) == []


def test_a_builtins_help_imports_that_command_only():
    code, modules, output = _run("predict", "--help")
    assert code in (0, None)
    assert "--input" in output
    assert _loaded(modules, ("paddlectl.cli.predict",)) == ["paddlectl.cli.predict"]
    assert _loaded(modules, HEAVY + tuple(m for m in COMMAND_MODULES if m != "paddlectl.cli.predict")) == []


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_listed_help_is_the_first_line_of_the_commands_docstring(name):
    spec = BUILTINS[name]
    function = getattr(importlib.import_module(spec.module), spec.function)
    assert inspect.getdoc(function).splitlines()[0] == spec.help


def test_root_help_lists_commands_with_their_one_line_help():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    flat = " ".join(result.output.replace("│", " ").split())
    assert "Check this machine: Python, OS, CPU" in flat
    for name, plugin in commands().items():
        summary = plugin.entry_point.dist.metadata["Summary"]
        assert " ".join(summary.split()[:4]) in flat, name
