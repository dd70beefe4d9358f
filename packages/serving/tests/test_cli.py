"""`paddlectl serve` refuses a usage mistake in one line with exit code 2, before it listens."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from paddlectl.serving.cli import app


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no model to serve; pass --model NAME=DIR"),
        (["--model", "digits=/no/such/dir"], "does not exist"),
        (["--model", "digits=LENET", "--config", "/no/serve.yml"], "config file '/no/serve.yml' not found"),
        (["--model", "digits=LENET", "--ssl-certfile", "cert.pem"], "TLS needs both --ssl-certfile and --ssl-keyfile"),
        (["--model", "digits=LENET", "--env", "prod"], "--env prod needs --keys FILE"),
        (["--model", "digits=NOT_A_MODEL"], "cannot serve"),
        (["--model", "digits=LENET", "--config", "BREAKER"], "models.digits.breaker"),
        (["--model", "digits=LENET", "--config", "COST"], "models.digits.cost"),
    ],
)
def test_usage_errors_exit_2_in_one_line(args, message, lenet, tmp_path):
    (tmp_path / "breaker.yml").write_text("models: {digits: {breaker: {error_rat: 0.5}}}")
    (tmp_path / "cost.yml").write_text("models: {digits: {cost: {machine: no-such-machine}}}")
    names = {"NOT_A_MODEL": tmp_path / "empty", "LENET": lenet, "BREAKER": tmp_path / "breaker.yml",
             "COST": tmp_path / "cost.yml"}  # fmt: skip
    (tmp_path / "empty").mkdir()
    for placeholder, value in names.items():
        args = [a.replace(placeholder, str(value)) for a in args]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
