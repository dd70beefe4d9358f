"""The README's demo (the `demo` session of noxfile.py) as a user meets it: its last line is a
command that works in the user's shell, and the README says what its two commands install."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NOXFILE = ROOT / "noxfile.py"


def _session(name: str) -> ast.FunctionDef:
    tree = ast.parse(NOXFILE.read_text(encoding="utf-8"))
    return next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)


@pytest.mark.skipif(not NOXFILE.is_file(), reason="outside the monorepo")
def test_the_demo_prints_the_mlflow_of_its_own_virtualenv():
    """mlflow exists only in the session's virtualenv: a bare `mlflow ui` fails in the user's shell."""
    demo = _session("demo")
    calls = [n for n in ast.walk(demo) if isinstance(n, ast.Call) and ast.unparse(n.func) == "session.log"]
    printed = ast.unparse(calls[-1])
    assert "mlflow ui" not in printed  # the command is built from the virtualenv's own executable
    assert "Path(session.bin) / 'mlflow'" in ast.unparse(demo)


@pytest.mark.skipif(not NOXFILE.is_file(), reason="outside the monorepo")
def test_the_readme_says_what_the_two_commands_install():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Two commands") : readme.index("## Tour")]
    assert "into the interpreter" in section and "pip and setuptools" in section and "virtualenv" in section
