"""A run whose inputs fail is a failure, not a result: `run` exits 1 naming the cause, `promote`
refuses it, and the gate compares the main metric and the error rate and says why it cannot judge."""

import json

import pytest
from digits_task import BrokenDigitsTask
from helpers import evaluate_and_log
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.gate import run_gate
from paddlectl.eval_harness.settings import load_settings

cli = CliRunner()
FAST = ["-o", "Eval.harness.batch_sizes=[1]", "-o", "Eval.harness.max_samples=64"]


def test_run_names_the_failed_inputs_with_their_count_and_exits_1(exported, config_file):
    args = ["run", "--model", str(exported), "--task", "digits_task:BrokenDigitsTask", "-c", str(config_file), *FAST]
    failed = cli.invoke(app, args)
    assert failed.exit_code == 1, failed.output
    assert "94 of 94 inputs failed" in failed.output  # 64 evaluated + 30 timed requests of one input
    assert "94 x KeyError: 'image_mode'" in failed.output

    tolerated = cli.invoke(app, [*args, "-o", "Eval.harness.max_error_rate=1"])
    assert tolerated.exit_code == 0, tolerated.output
    assert "warning: 94 of 94 inputs failed" in tolerated.output


def test_promote_refuses_a_broken_run_and_the_gate_names_its_failures(
    task, runner, config, config_file, weights, tmp_path
):
    good = evaluate_and_log(task, runner, config, weights)
    broken = evaluate_and_log(BrokenDigitsTask(), runner, config, weights)
    assert cli.invoke(app, ["promote", good.run_id, "-c", str(config_file)]).exit_code == 0

    refused = cli.invoke(app, ["promote", broken.run_id, "-c", str(config_file)])
    assert refused.exit_code == 1, refused.output
    assert "not promoted" in refused.output and "KeyError: 'image_mode'" in refused.output
    assert "--force" in refused.output

    gated = cli.invoke(app, ["gate", "-c", str(config_file), "--candidate", broken.run_id, "--json"])
    assert gated.exit_code == 1, gated.output
    checks = {c["name"]: c for c in json.loads(gated.stdout)["checks"]}
    assert checks["error_rate"]["status"] == "regression"
    assert "KeyError: 'image_mode'" in checks["error_rate"]["detail"]
    assert "KeyError" in checks["latency_bs1 (mannwhitney)"]["detail"]  # too few samples, and why

    forced = cli.invoke(app, ["promote", broken.run_id, "--force", "-c", str(config_file)])
    assert forced.exit_code == 0, forced.output
    later = cli.invoke(app, ["gate", "-c", str(config_file), "--candidate", good.run_id, "--json"])
    assert later.exit_code == 3, later.output
    (reason,) = json.loads(later.stdout)["reasons"]
    assert f"the baseline {broken.run_id} has no usable samples" in reason and "KeyError" in reason
    assert f"`paddlectl eval promote {good.run_id} -c {config_file}`" in reason


def test_the_gate_compares_the_main_metric_and_the_error_rate_by_default(task, runner, config, weights):
    config["Eval"]["harness"]["thresholds"] = {}  # nothing configured: the defaults still guard accuracy
    first = evaluate_and_log(task, runner, config, weights).run.report()
    second = evaluate_and_log(task, runner, config, weights).run.report()
    assert first.main_metric == "accuracy"
    settings = load_settings(config)
    names = {c.name: c for c in run_gate(second, first, settings).checks}
    assert {"accuracy", "error_rate"} <= names.keys()
    assert names["accuracy"].status == names["error_rate"].status == "pass"

    second.metrics["accuracy"] -= 0.01
    worse = run_gate(second, first, settings)
    assert worse.exit_code == 1
    assert worse.ordered()[0].name == "accuracy"


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_max_error_rate_is_a_share(value):
    from paddlectl.framework.errors import ConfigError

    with pytest.raises(ConfigError, match=r"max_error_rate. must be in \[0, 1\]"):
        load_settings({"Eval": {"harness": {"max_error_rate": value}}})
