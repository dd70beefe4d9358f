"""Cost per 1,000 predictions: an unset price is "not set", never 0; named machines come from a
shipped table in which every price has a source and a date."""

import pytest
import yaml
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.cost import load_prices
from paddlectl.eval_harness.evaluate import evaluate
from paddlectl.eval_harness.settings import load_settings
from paddlectl.framework.errors import ConfigError

cli = CliRunner()


def test_every_shipped_price_has_a_source_and_a_date():
    table = load_prices()
    assert "aws.t3.large" in table
    for name, entry in table.items():
        assert entry["price_per_hour"] > 0 and entry["currency"] == "USD", name
        assert entry["source"].startswith("https://") and str(entry["date"]).startswith("20"), name


def test_an_unset_price_records_no_cost(task, runner, config):
    del config["Eval"]["harness"]["cost"]
    settings = load_settings(config)
    assert settings.cost.machine_price_per_hour is None
    assert settings.cost.basis().startswith("not set")
    report, _ = evaluate(task, runner, settings, model_path="lenet", config=config)
    assert not [name for name in report.metrics if name.startswith("cost_")]
    assert report.cost == {}


def test_a_named_machine_prices_the_predictions(task, runner, config):
    config["Eval"]["harness"]["cost"] = {"machine": "aws.t3.large"}
    settings = load_settings(config)
    assert settings.cost.machine_price_per_hour == pytest.approx(0.0832)
    assert "aws.t3.large at 0.0832 USD/h (https://" in settings.cost.basis()
    report, _ = evaluate(task, runner, settings, model_path="lenet", config=config)
    m = report.metrics
    assert m["cost_per_1k"] == pytest.approx(0.0832 / 3600 * 1000 / m["throughput"])
    assert report.cost["machine"] == "aws.t3.large" and report.cost["date"]


def test_a_users_table_and_price_override_the_shipped_one(tmp_path):
    prices = tmp_path / "prices.yml"
    prices.write_text(yaml.safe_dump({"lab.box": {"price_per_hour": 0.5, "currency": "EUR", "source": "invoice 42",
                                                  "date": "2026-11-01"}}))  # fmt: skip
    own = load_settings({"Eval": {"harness": {"cost": {"machine": "lab.box", "prices_file": str(prices)}}}}).cost
    assert (own.machine_price_per_hour, own.currency) == (0.5, "EUR")
    assert own.basis() == "lab.box at 0.5 EUR/h (invoice 42, 2026-11-01)"
    overridden = load_settings({"Eval": {"harness": {"cost": {"machine": "aws.t3.large",
                                                              "machine_price_per_hour": 0.1}}}}).cost  # fmt: skip
    assert overridden.machine_price_per_hour == 0.1
    assert overridden.basis() == "aws.t3.large at 0.1 USD/h (Eval.harness.cost.machine_price_per_hour)"


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        ({"machine": "aws.t3.lareg"}, "did you mean 'aws.t3.large'"),
        ({"machne": "aws.t3.large"}, "did you mean 'machine'"),
        ({"machine": "x", "prices_file": "/nonexistent/prices.yml"}, "cannot read"),
        ({"machine_price_per_hour": -1}, ">= 0"),
    ],
)
def test_bad_cost_config_names_the_key_and_the_fix(cost, message):
    with pytest.raises(ConfigError, match=message):
        load_settings({"Eval": {"harness": {"cost": cost}}})


def test_run_shows_an_unset_cost_as_not_set(exported, config_file, tmp_path):
    result = cli.invoke(
        app,
        ["run", "--model", str(exported), "--task", "digits_task:DigitsTask", "-c", str(config_file),
         "-o", "Eval.harness.cost={}", "-o", "Eval.harness.batch_sizes=[1]", "-o", "Eval.harness.max_samples=32"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "not set" in result.output and "cost per 1,000 predictions: not set" in result.output
