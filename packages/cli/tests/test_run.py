"""`paddlectl run`: unmodified Paddle scripts (files under paddle_scripts/) run on paddlectl through
the import alias, in a subprocess as a user runs them; a missing API stops with one line."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import paddlectl.framework
from paddlectl.cli.api_check import check_source, missing_prefix, used_names
from paddlectl.cli.app import app
from paddlectl.cli.paddle_alias import paddle_alias
from paddlectl.cli.run import describe_failure

SCRIPTS = Path(__file__).parent / "paddle_scripts"
FRAMEWORK_DIR = Path(paddlectl.framework.__file__).parent


def invoke_run(*args):
    """In-process, for what runs no script (usage errors, --check)."""
    return CliRunner().invoke(app, ["run", *map(str, args)])


def paddlectl_run(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "paddlectl.cli", "run", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def line_of(script: Path, marker: str) -> int:
    return next(i for i, line in enumerate(script.read_text().splitlines(), 1) if marker in line)


def one_error_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


# ----- real Paddle scripts ---------------------------------------------------------------------


def test_training_script_trains_saves_and_reloads(tmp_path):
    proc = paddlectl_run(SCRIPTS / "train_regression.py", tmp_path, "--epochs", "25")
    assert proc.returncode == 0, proc.stderr
    losses = [float(line.split()[-1]) for line in proc.stdout.splitlines() if line.startswith("epoch")]
    assert len(losses) == 25 and losses[-1] < losses[0] / 10
    assert "restored matches: True" in proc.stdout
    prediction = [float(v) for v in proc.stdout.split("prediction:")[1].split()]
    assert prediction == pytest.approx([-0.5, 3.5], abs=0.5)  # y = 2*x0 - 3*x1 + 0.5
    assert {p.name for p in tmp_path.iterdir()} == {"regressor.pdparams", "regressor.pdopt"}


def test_cnn_script_deploys_through_jit_save_and_a_predictor(tmp_path):
    proc = paddlectl_run(SCRIPTS / "classify_and_deploy.py", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the script exits 3 when served != eager
    accuracy = float(proc.stdout.split("predictor accuracy")[1].split()[0])
    assert accuracy >= 0.9
    assert (tmp_path / "inference" / "small_cnn").is_dir()


def test_high_level_api_script_fits_and_evaluates():
    proc = paddlectl_run(SCRIPTS / "hapi_fit.py")
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.split("eval acc")[1].split()[0]) >= 0.9
    assert "predict shape (100, 2)" in proc.stdout


def test_script_sees_python_script_semantics_and_paddle_is_paddlectl(tmp_path):
    proc = paddlectl_run(SCRIPTS / "probe.py", "report", "--json", "x", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["argv"] == [str(SCRIPTS / "probe.py"), "report", "--json", "x"]  # its --json is its own
    assert report["name"] == "__main__"
    assert report["path0"] == str(SCRIPTS)
    assert report["paddle_name"] == "paddlectl.framework"
    assert report["functional_name"] == "paddlectl.framework.nn.functional"
    assert Path(report["paddle_file"]).parent == FRAMEWORK_DIR
    assert report["same_layer_class"] and report["tensor_is_paddle_tensor"]


def test_alias_wins_over_a_paddle_package_on_the_path(tmp_path):
    decoy = tmp_path / "paddle"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('the decoy paddle package was imported')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    assert subprocess.run([sys.executable, "-c", "import paddle"], env=env, capture_output=True).returncode == 1
    proc = paddlectl_run(SCRIPTS / "probe.py", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["paddle_name"] == "paddlectl.framework"


@pytest.mark.skipif(importlib.util.find_spec("paddle") is None, reason="PaddlePaddle is not installed here")
def test_alias_wins_over_installed_paddlepaddle():
    real = Path(importlib.util.find_spec("paddle").origin).parent
    assert real != FRAMEWORK_DIR
    proc = paddlectl_run(SCRIPTS / "probe.py")
    assert proc.returncode == 0, proc.stderr
    assert Path(json.loads(proc.stdout)["paddle_file"]).parent == FRAMEWORK_DIR


def test_exit_code_of_the_script_passes_through():
    assert paddlectl_run(SCRIPTS / "probe.py", "exit", "4").returncode == 4
    assert paddlectl_run(SCRIPTS / "probe.py", "exit", "0").returncode == 0


# ----- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "api"),
    [
        ("module", "paddle.quantization"),
        ("attribute", "paddle.geometric"),
        ("name", "paddle.static.ipu_shard_guard"),
        ("method", "paddle.Tensor.geometric_"),
    ],
)
def test_missing_api_stops_with_one_line_naming_it_and_the_line(mode, api):
    script = SCRIPTS / "uses_missing_api.py"
    proc = paddlectl_run(script, mode)
    assert proc.returncode == 1
    assert "sum before the missing API: True" in proc.stdout and "not reached" not in proc.stdout
    error = one_error_line(proc)
    missing_lines = [i for i, line in enumerate(script.read_text().splitlines(), 1) if "# MISSING" in line]
    expected_line = missing_lines[["module", "attribute", "name", "method"].index(mode)]
    assert error.startswith(f"error: {script}:{expected_line}: {api} is not available in paddlectl")
    assert f"paddlectl run --check {script}" in error


@pytest.mark.parametrize(
    ("mode", "marker", "message"),
    [
        ("own-attribute", "self.fc2(x)", "AttributeError: 'Net' object has no attribute 'fc2'"),
        ("value", "raise ValueError", "ValueError: value must be non-negative, got -1"),
    ],
)
def test_the_scripts_own_errors_are_not_reported_as_missing_apis(mode, marker, message):
    script = SCRIPTS / "probe.py"
    proc = paddlectl_run(script, mode)
    assert proc.returncode == 1
    assert one_error_line(proc) == f"error: {script}:{line_of(script, marker)}: {message}"


def test_an_error_raised_inside_paddlectl_names_the_scripts_line_and_where_it_was_raised():
    script = SCRIPTS / "probe.py"
    proc = paddlectl_run(script, "shape")
    error = one_error_line(proc)
    assert proc.returncode == 1
    assert error.startswith(f"error: {script}:{line_of(script, 'paddle.matmul(')}: ShapeError: matmul")
    assert "(in " in error and "ops/linalg.py:" in error and "not available" not in error


def test_a_syntax_error_is_one_line_at_its_line(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import paddle\nx = (1,\nprint(x)\n")
    proc = paddlectl_run(script)
    assert proc.returncode == 1
    assert one_error_line(proc) == f"error: {script}:2: SyntaxError: '(' was never closed"


def test_traceback_option_prints_the_scripts_traceback():
    proc = paddlectl_run("--traceback", SCRIPTS / "probe.py", "value")
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback") and "check_input(-1)" in proc.stderr
    assert "runpy" not in proc.stderr  # starts at the script's frame, as `python script.py` shows it


def test_a_lookup_that_fails_inside_paddlectl_is_its_defect_not_a_missing_api():
    namespace = {}
    inside = str(FRAMEWORK_DIR / "not_a_real_module.py")
    try:
        exec(compile("import paddlectl.framework as fw\nfw.no_such_name\n", inside, "exec"), namespace)  # noqa: S102
    except AttributeError as exc:
        assert "not available" not in describe_failure(exc, Path("script.py"))
        assert "AttributeError: module 'paddlectl.framework' has no attribute 'no_such_name'" in describe_failure(
            exc, Path("script.py")
        )
    else:
        raise AssertionError("the lookup must fail")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing_script.py"], "does not exist"),
        (["--bogus", SCRIPTS / "probe.py"], "unknown option '--bogus'"),
        (["--json", "out.json", SCRIPTS / "probe.py"], "--json goes with --check"),
        (["--check", SCRIPTS / "probe.py", "--json", "out.json"], "options such as --json go before the script"),
    ],
)
def test_usage_errors_exit_2(args, message):
    result = invoke_run(*args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


# ----- --check ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["train_regression.py", "classify_and_deploy.py", "hapi_fit.py"])
def test_check_finds_every_api_of_the_scripts_present(name, tmp_path):
    out = tmp_path / "check.json"
    result = invoke_run("--check", "--json", out, SCRIPTS / name)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["missing"] == []
    assert {"paddle.nn.Linear", "paddle.seed"} <= {a["name"] for a in report["apis"]}


def test_check_lists_missing_apis_and_exits_1_without_running_the_script(tmp_path):
    out = tmp_path / "check.json"
    result = invoke_run("--check", "--json", out, SCRIPTS / "uses_missing_api.py")
    assert result.exit_code == 1
    assert "sum before" not in result.output  # nothing of the script ran
    report = json.loads(out.read_text())
    assert report["missing"] == [
        "paddle.geometric.segment_sum",
        "paddle.quantization.config",
        "paddle.quantization.config.QuantConfig",
        "paddle.static.ipu_shard_guard",
    ]
    by_name = {a["name"]: a for a in report["apis"]}
    assert by_name["paddle.quantization.config.QuantConfig"]["missing"] == "paddle.quantization"
    assert by_name["paddle.rand"]["missing"] is None
    assert "4 of 7 paddle APIs are missing" in result.output


def test_check_of_a_script_without_paddle_says_so(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("import numpy as np\nprint(np.pi)\n")
    result = invoke_run("--check", script)
    assert result.exit_code == 0
    assert "names no paddle API" in result.output


def test_used_names_follows_imports_and_aliases():
    source = textwrap.dedent(
        """
        import paddle
        import paddle.nn.functional as F
        import paddle.vision
        from paddle import nn
        from paddle.io import DataLoader as Loader
        import numpy as np

        class Net(nn.Layer):
            def forward(self, x):
                return F.relu(paddle.nn.functional.sigmoid(x)).mean()

        loader = Loader(np.zeros(3))
        paddle.vision.transforms.ToTensor()
        nn
        """
    )
    uses = used_names(source)
    assert set(uses) == {
        "paddle",
        "paddle.nn.functional",
        "paddle.vision",
        "paddle.nn",
        "paddle.io.DataLoader",
        "paddle.nn.Layer",
        "paddle.nn.functional.relu",
        "paddle.nn.functional.sigmoid",
        "paddle.vision.transforms.ToTensor",
    }
    assert uses["paddle.nn"] == [5, 15]
    assert uses["paddle.io.DataLoader"] == [6, 13]


def test_missing_prefix_resolves_attributes_and_submodules():
    assert missing_prefix("paddle.nn.functional.relu") is None
    assert missing_prefix("paddle.static.InputSpec") is None  # a module __getattr__ name
    assert missing_prefix("paddle.optimizer.lr.StepDecay") is None
    assert missing_prefix("paddle.Tensor.reshape") is None
    assert missing_prefix("paddle.distributed.fleet.init") is None  # paddle.distributed runs on MPI
    assert missing_prefix("paddle.quantization.config.QuantConfig") == "paddle.quantization"
    assert missing_prefix("paddle.sparse.nn.ReLU") is None  # paddle.sparse exists since session 13
    assert missing_prefix("paddle.nn.NoSuchLayer") == "paddle.nn.NoSuchLayer"
    assert [u.name for u in check_source("from paddle import *\n")] == ["paddle"]


def test_the_alias_is_scoped_and_yields_the_same_module_objects():
    with paddle_alias():
        import paddle
        import paddle.nn.functional as F

        assert paddle is paddlectl.framework
        assert F is paddlectl.framework.nn.functional
        assert paddlectl.framework.__spec__.name == "paddlectl.framework"  # its own spec, kept
    assert "paddle" not in sys.modules and "paddle.nn.functional" not in sys.modules
