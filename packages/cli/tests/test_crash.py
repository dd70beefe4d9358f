"""No traceback reaches a user: main() turns a typed error into one ``error:`` line (exit 2) and any
other exception into one line naming the saved traceback (exit 1); --debug prints the traceback."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
import typer

from paddlectl.cli import registry, show
from paddlectl.cli.app import main
from paddlectl.framework.errors import DataError


def _main(monkeypatch, capsys, *argv: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["paddlectl", *argv])
    with pytest.raises(SystemExit) as exit_info:
        main()
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def crash_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PADDLECTL_DEBUG", raising=False)
    return tmp_path / "paddlectl" / "crashes"


def _tasks_fail(monkeypatch, exc: Exception) -> None:
    def broken():
        raise exc

    monkeypatch.setattr(show, "tasks", broken)


def test_an_internal_error_is_one_line_with_the_traceback_saved(monkeypatch, capsys, crash_dir):
    _tasks_fail(monkeypatch, RuntimeError("entry point table\nis corrupt"))
    code, _, err = _main(monkeypatch, capsys, "tasks")
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "`paddlectl tasks` failed with RuntimeError: entry point table is corrupt at test_crash.py:" in lines[0]
    assert "report" in lines[0] and "--debug" in lines[0]
    (report,) = crash_dir.iterdir()
    assert str(report) in lines[0]
    text = report.read_text()
    assert text.startswith("command: paddlectl tasks\n")
    assert "Traceback (most recent call last)" in text and "RuntimeError: entry point table" in text
    assert "paddlectl-framework 0.1.0" in text


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_prints_the_traceback(monkeypatch, capsys, crash_dir, how):
    _tasks_fail(monkeypatch, RuntimeError("boom"))
    if how == "env":
        monkeypatch.setenv("PADDLECTL_DEBUG", "1")
    code, _, err = _main(monkeypatch, capsys, *(["--debug"] if how == "flag" else []), "tasks")
    assert code == 1
    assert "Traceback (most recent call last)" in err and "RuntimeError: boom" in err
    assert not crash_dir.exists()


def _fake_plugin(monkeypatch, command) -> None:
    tool = typer.Typer()
    tool.command("run")(command)
    tool.callback()(lambda: None)
    plugin = SimpleNamespace(
        distribution="paddlectl-fake-tool", entry_point=SimpleNamespace(dist=None), load=lambda: tool
    )
    monkeypatch.setattr(registry, "commands", lambda: {"fake": plugin})


def test_a_plugins_internal_error_is_one_line(monkeypatch, capsys, crash_dir):
    def run() -> None:
        [][1]

    _fake_plugin(monkeypatch, run)
    code, _, err = _main(monkeypatch, capsys, "fake", "run")
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "`paddlectl fake run` failed with IndexError" in err


def test_a_plugins_typed_error_is_a_usage_error(monkeypatch, capsys, crash_dir):
    def run() -> None:
        raise DataError("input [1] is not an image; pass a .png")

    _fake_plugin(monkeypatch, run)
    code, _, err = _main(monkeypatch, capsys, "fake", "run")
    assert code == 2
    assert err.strip() == "error: input [1] is not an image; pass a .png"
    assert not crash_dir.exists()
