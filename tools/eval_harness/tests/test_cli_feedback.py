"""What a user sees while and before the work runs: progress over the long steps, argument errors
before any heavy import, and names printed as they are (not read as rich markup)."""

import subprocess
import sys
import textwrap

from digits_task import BracketedDigitsTask
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.evaluate import evaluate

cli = CliRunner()


class RecordedStages:
    def __init__(self) -> None:
        self.steps: dict[str, list] = {}

    def stage(self, description, total=None):
        self.steps[description] = [total, 0]
        return lambda units=1: self.steps[description].__setitem__(1, self.steps[description][1] + units)


def test_evaluation_reports_progress_over_the_data_set_and_the_latency_rounds(task, runner, settings, config):
    stages = RecordedStages()
    evaluate(task, runner, settings, model_path="lenet", config=config, stages=stages)
    (data_set,) = [v for k, v in stages.steps.items() if k.startswith("evaluation set")]
    assert data_set[1] == 297  # every evaluation input
    (latency,) = [v for k, v in stages.steps.items() if k.startswith("latency")]
    assert latency == [5 * 2, 5 * 2]  # 5 rounds x batch sizes 1 and 4, all done


def test_a_missing_option_is_reported_before_any_heavy_import():
    script = textwrap.dedent(
        """
        import sys
        from typer.testing import CliRunner
        from paddlectl.eval_harness.cli import app
        result = CliRunner().invoke(app, ["history"])
        heavy = sorted(m for m in ("mlflow", "paddlectl.framework", "scipy", "matplotlib") if m in sys.modules)
        print(result.exit_code, "Missing option" in result.output, heavy)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split("\n")[0] == "2 True []", done.stdout + done.stderr


def test_bracketed_names_are_printed_as_they_are(exported, config_file):
    result = cli.invoke(
        app,
        ["run", "--model", str(exported), "--task", "digits_task:BracketedDigitsTask", "-c", str(config_file),
         "--tracking-uri", "http://127.0.0.1:9", "-o", "Eval.harness.batch_sizes=[1]",
         "-o", "Eval.harness.max_samples=32", "-o", "Eval.harness.model_name='[b]net'"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "acc[top1]" in result.output
    assert "[b]net" in result.output
    assert BracketedDigitsTask.name in result.output
