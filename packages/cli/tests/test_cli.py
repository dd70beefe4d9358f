import json
import subprocess
import sys
from types import SimpleNamespace

from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.cli.plugins import MissingProviderError, installed_paddlectl, load_task

runner = CliRunner()


def test_version_lists_installed_distributions():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert "paddlectl-framework" in result.output and "paddlectl " in result.output


def test_doctor_reports_and_writes_json(tmp_path):
    out = tmp_path / "doctor.json"
    result = runner.invoke(app, ["doctor", "--json", str(out)])
    assert result.exit_code == 0, result.output
    names = [f["name"] for f in json.loads(out.read_text())]
    assert names[:5] == ["python", "os", "cpu", "numpy", "numba"]
    assert {"numba jit", "numba cache", "training", "mpi", "paddlectl"} <= set(names)


def test_doctor_exits_1_when_jit_is_broken():
    env = {**__import__("os").environ, "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run([sys.executable, "-m", "paddlectl.cli", "doctor"], env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "broken" in proc.stderr and "NUMBA_DISABLE_JIT" in proc.stderr


def test_missing_command_names_its_distribution(monkeypatch):
    from paddlectl.cli import registry

    monkeypatch.setattr(registry, "commands", lambda: {})  # as if no tool were installed
    result = runner.invoke(app, ["compat", "check", "--flag"])
    assert result.exit_code == 2
    assert "pip install paddlectl-compat-matrix" in result.output
    listing = runner.invoke(app, ["--help"])
    assert "(not installed) provided by paddlectl-compat-matrix" in " ".join(listing.output.split())


def test_task_lookup_names_provider():
    try:
        load_task("ocr.rec")
    except MissingProviderError as exc:
        assert "paddlectl-ocr" in str(exc)
    try:
        load_task("nosuch.task")
    except MissingProviderError as exc:
        assert "unknown task 'nosuch.task'" in str(exc)
    else:
        raise AssertionError("an unknown task must be refused")


def test_config_errors_are_one_line_with_exit_2(tmp_path):
    cfg = tmp_path / "c.yml"
    cfg.write_text("Global:\n  epochs: 2\n")
    ok = runner.invoke(app, ["config", "-c", str(cfg), "-o", "Global.epochs=4"])
    assert ok.exit_code == 0 and "epochs: 4" in ok.output
    for args, fragment in [
        (["-c", str(tmp_path / "missing.yml")], "not found"),
        (["-c", str(cfg), "-o", "Global.epoch=4"], "did you mean 'epochs'"),
        (["-c", str(cfg), "-o", "Global.epochs"], "malformed override"),
    ]:
        result = runner.invoke(app, ["config", *args])
        assert result.exit_code == 2, result.output
        assert fragment in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_plugins_are_imported_only_when_their_command_runs():
    code = (
        "import sys; from typer.testing import CliRunner; from paddlectl.cli.app import app;"
        "r = CliRunner().invoke(app, ['tasks']); assert r.exit_code == 0, r.output;"
        "print(sorted(m for m in sys.modules if m.startswith(('paddlectl.eval_harness', 'paddlectl.compat_matrix', 'mlflow'))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_plugin_that_fails_to_import_is_reported_when_used(monkeypatch):
    from paddlectl.cli import registry

    class Broken:
        distribution = "paddlectl-fake-tool"
        entry_point = SimpleNamespace(dist=None)

        def load(self):
            raise ImportError("No module named 'fake_dependency'")

    monkeypatch.setattr(registry, "commands", lambda: {"fake": Broken()})
    result = runner.invoke(app, ["fake", "run", "--flag"])
    listing = runner.invoke(app, ["--help"])
    assert result.exit_code == 2
    assert "paddlectl-fake-tool failed to load: No module named 'fake_dependency'" in result.output
    assert "reinstall paddlectl-fake-tool" in result.output
    assert "fake" in listing.output and listing.exit_code == 0


def test_doctor_prints_bracketed_advice_verbatim(monkeypatch):
    from paddlectl.cli import doctor

    advice = "pip install 'paddlectl-framework[distributed]'"
    findings = [doctor.Finding("mpi", "warn", advice), doctor.Finding("numba [jit]", "fail", "x[0] is [red]")]
    monkeypatch.setattr(doctor, "diagnose", lambda: findings)
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert advice in result.output
    assert "broken: numba [jit]: x[0] is [red]" in result.output


def test_installed_paddlectl_reads_the_same_names_as_full_metadata():
    from importlib.metadata import distributions

    expected = {}
    for dist in distributions():
        name = dist.metadata["Name"] or ""
        if name == "paddlectl" or name.startswith("paddlectl-"):
            expected[name] = dist.version
    assert installed_paddlectl() == dict(sorted(expected.items()))
