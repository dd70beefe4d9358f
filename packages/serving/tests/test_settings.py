"""serve.yml and --model are checked before anything loads: each mistake names its key and the fix."""

from __future__ import annotations

import pytest
import yaml

from paddlectl.serving.errors import ServeConfigError
from paddlectl.serving.settings import ModelSettings, load_settings, parse_model_args


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "m").mkdir()
    return tmp_path / "m"


def settings_from(tmp_path, model_dir, text: str, names=("a", "b")):
    (tmp_path / "serve.yml").write_text(text)
    return load_settings([f"{n}={model_dir}" for n in names], tmp_path / "serve.yml")


def test_per_model_settings_and_defaults(tmp_path, model_dir):
    config = {"server": {"max_body_bytes": 1000}, "models": {"a": {"max_batch_size": 4, "fallback": "b"}}}
    settings = settings_from(tmp_path, model_dir, yaml.safe_dump(config))
    assert settings.server.max_body_bytes == 1000
    assert settings.model("a") == ModelSettings(max_batch_size=4, fallback="b")
    assert settings.model("b") == ModelSettings()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: {a: {max_batchsize: 4}}", "did you mean 'max_batch_size'"),
        ("models: {a: {max_batch_size: 0}}", "models.a.max_batch_size must be an integer >= 1"),
        ("models: {a: {max_batch_size: true}}", "models.a.max_batch_size must be an integer >= 1"),
        ("models: {a: {timeout_ms: 0}}", "models.a.timeout_ms must be > 0"),
        ("models: {a: {max_delay_ms: -1}}", "models.a.max_delay_ms must be >= 0"),
        ("models: {a: {queue_size: '8'}}", "must be int"),
        ("models: {a: {fallback: a}}", "fallback 'a' must name another served model"),
        ("models: {a: {fallback: c}}", "fallback 'c' must name another served model"),
        ("models: {c: {}}", "no --model c=DIR is given"),
        ("models: {a: {breaker: 3}}", "models.a.breaker must be a mapping"),
        ("server: {max_bodybytes: 3}", "did you mean 'max_body_bytes'"),
        ("models: [a]", "models must map model names"),
        ("serve: {}", "unknown config key 'serve'"),
        ("models: {a: [", "not valid YAML"),
        ("models: {a: {checks: {deny: [x]}}}", "server.review_queue is not set"),
    ],
)
def test_serve_yml_mistakes_are_named(tmp_path, model_dir, text, message):
    with pytest.raises(ServeConfigError, match=message.replace("(", r"\(")):
        settings_from(tmp_path, model_dir, text)


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([], "no model to serve"),
        (["digits"], "write it as NAME=DIR"),
        (["../x=DIR"], "a model name is 1-64 letters"),
        (["a=MODEL", "a=MODEL"], "is given twice"),
        (["a=/no/such/dir"], "does not exist"),
    ],
)
def test_model_arguments_are_checked(model_dir, pairs, message):
    with pytest.raises(ServeConfigError, match=message):
        parse_model_args([p.replace("MODEL", str(model_dir)) for p in pairs])
