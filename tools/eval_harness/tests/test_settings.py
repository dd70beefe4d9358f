from pathlib import Path

import pytest

from paddlectl.eval_harness.settings import load_settings
from paddlectl.framework.config import load_config
from paddlectl.framework.errors import ConfigError


def test_defaults_when_the_section_is_absent():
    settings = load_settings({})
    assert settings.batch_sizes == (1,)
    assert settings.repeats == 50
    assert settings.latency_gate.test == "mannwhitney"
    assert settings.output_dir == Path("output/eval")


def test_output_dir_follows_global_output_dir():
    assert load_settings({"Global": {"output_dir": "runs/x"}}).output_dir == Path("runs/x/eval")


def test_yaml_file_with_overrides(tmp_path):
    path = tmp_path / "exp.yml"
    path.write_text(
        "Global: {task: vision.digits}\n"
        "Eval:\n  dataset: {name: digits}\n  harness:\n    repeats: 20\n"
        "    thresholds: {accuracy: {direction: higher, relative: 0.01}}\n"
    )
    config = load_config(path, ["Eval.harness.repeats=200", "Eval.harness.cost.machine_price_per_hour=1e-1"])
    settings = load_settings(config)
    assert settings.repeats == 200
    assert settings.cost.machine_price_per_hour == pytest.approx(0.1)
    (rule,) = settings.thresholds
    assert (rule.metric, rule.direction, rule.relative) == ("accuracy", "higher", 0.01)


@pytest.mark.parametrize(
    ("harness", "message"),
    [
        ({"repats": 3}, "did you mean 'repeats'"),
        ({"latency_gate": {"alpah": 0.1}}, "did you mean 'alpha'"),
        ({"batch_sizes": [0]}, "positive ints"),
        ({"repeats": 0}, "at least 1"),
        ({"latency_gate": {"test": "ttest"}}, "mannwhitney"),
        ({"thresholds": {"accuracy": {"direction": "up", "absolute": 0.1}}}, "'higher' or 'lower'"),
        ({"thresholds": {"accuracy": {"direction": "higher"}}}, "needs 'absolute' or 'relative'"),
        ({"thresholds": {"accuracy": {"absolut": 0.1}}}, "did you mean 'absolute'"),
        ({"cost": {"machine_price_per_hour": "cheap"}}, "must be float"),
    ],
)
def test_bad_harness_config_names_the_key_and_the_fix(harness, message):
    with pytest.raises(ConfigError, match=message):
        load_settings({"Eval": {"harness": harness}})


def test_threshold_allowance_takes_the_larger_of_absolute_and_relative():
    settings = load_settings({"Eval": {"harness": {"thresholds": {"m": {"absolute": 0.5, "relative": 0.1}}}}})
    (rule,) = settings.thresholds
    assert rule.allowance(2.0) == 0.5
    assert rule.allowance(10.0) == pytest.approx(1.0)
