"""The key file: only hashes on disk, private permissions, validation, revocation, reload."""

from __future__ import annotations

import json
import os
import stat

import pytest

from paddlectl.serving import keys
from paddlectl.serving.errors import ServeConfigError


def test_add_stores_only_the_hash_with_private_permissions(tmp_path):
    path = tmp_path / "keys.json"
    record, key = keys.add(path, "alice", "prod", rate="10/s", quota="10000/day", budget="5.00/day")
    text = path.read_text()
    assert key.startswith(keys.KEY_PREFIX) and len(key) > 40
    assert key not in text and key[len(keys.KEY_PREFIX) :] not in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    entry = json.loads(text)["keys"]["alice"]
    assert entry["sha256"] == keys.hash_key(key) and entry["env"] == "prod"
    assert entry["rate"] == "10/s" and entry["quota_per_day"] == 10000 and entry["budget_per_day"] == 5.0
    loaded = keys.load(path)
    assert loaded.find(key) == record
    assert loaded.find(key + "x") is None


def test_keys_are_unique_and_names_not_reused(tmp_path):
    path = tmp_path / "keys.json"
    _, a = keys.add(path, "a", "dev")
    _, b = keys.add(path, "b", "dev")
    assert a != b
    with pytest.raises(ServeConfigError, match="already in"):
        keys.add(path, "a", "test")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "../x"}, "key name"),
        ({"env": "staging"}, "not one of dev, test, prod"),
        ({"rate": "10/fortnight"}, "N/s, N/min or N/h"),
        ({"rate": "0/s"}, "N > 0"),
        ({"quota": "1.5/day"}, "whole number per day"),
        ({"budget": "five"}, "number per day"),
    ],
)
def test_add_rejects_bad_input(tmp_path, kwargs, match):
    args = {"name": "k", "env": "dev"} | kwargs
    with pytest.raises(ServeConfigError, match=match):
        keys.add(tmp_path / "keys.json", **args)
    assert not (tmp_path / "keys.json").exists()


def test_rates_parse_to_tokens_per_period():
    assert keys.parse_rate("600/min") == keys.Rate(600.0, 60.0)
    assert keys.parse_rate("2.5/s") == keys.Rate(2.5, 1.0)
    assert str(keys.parse_rate("1000/h")) == "1000/h"


def test_revoke_keeps_the_record_and_is_idempotent(tmp_path):
    path = tmp_path / "keys.json"
    _, key = keys.add(path, "bob", "test")
    first = keys.revoke(path, "bob")
    assert first.revoked is not None
    assert keys.revoke(path, "bob").revoked == first.revoked
    assert keys.load(path).find(key).revoked == first.revoked
    with pytest.raises(ServeConfigError, match="no key named 'carol'.*known: bob"):
        keys.revoke(path, "carol")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "is not JSON"),
        ('{"format": 2, "keys": {}}', "format-1"),
        ('{"format": 1, "keys": {"a": {"env": "dev", "sha256": "abc", "created": ""}}}', "64 lowercase hex"),
        ('{"format": 1, "keys": {"a": {"env": "x", "sha256": "' + "0" * 64 + '"}}}', "not one of"),
        (
            '{"format": 1, "keys": {"a": {"env": "dev", "sha256": "' + "0" * 64 + '", "key": "s"}}}',
            "expected an object",
        ),
    ],
)
def test_malformed_key_files_are_refused(tmp_path, content, match):
    path = tmp_path / "keys.json"
    path.write_text(content)
    with pytest.raises(ServeConfigError, match=match):
        keys.load(path)


def test_watcher_sees_revocation_and_keeps_last_good_file(tmp_path):
    path = tmp_path / "keys.json"
    _, key = keys.add(path, "a", "dev")
    watcher = keys.KeyWatcher(path)
    assert watcher.current().find(key).revoked is None
    keys.revoke(path, "a")
    assert watcher.current().find(key).revoked is not None
    path.write_text("{broken")
    assert watcher.current().find(key).revoked is not None


def test_watcher_needs_an_existing_file(tmp_path):
    with pytest.raises(ServeConfigError, match="does not exist"):
        keys.KeyWatcher(tmp_path / "missing.json")


def test_cli_add_prints_the_key_last_and_list_never_shows_it(tmp_path):
    from typer.testing import CliRunner

    from paddlectl.serving.cli import app

    path = tmp_path / "keys.json"
    runner = CliRunner()
    added = runner.invoke(
        app, ["keys", "add", "ci", "--env", "test", "--rate", "5/s", "--quota", "100/day", "--keys", str(path)]
    )
    assert added.exit_code == 0, added.output
    key = added.output.strip().splitlines()[-1]
    assert keys.load(path).find(key).name == "ci" and "rate 5/s, quota 100/day" in added.output
    listed = runner.invoke(app, ["keys", "list", "--keys", str(path)])
    assert listed.exit_code == 0 and "ci" in listed.output and "active" in listed.output
    assert key not in listed.output and keys.hash_key(key) not in listed.output
    revoked = runner.invoke(app, ["keys", "revoke", "ci", "--keys", str(path)])
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    assert "revoked" in runner.invoke(app, ["keys", "list", "--keys", str(path)]).output


@pytest.mark.parametrize(
    "args",
    [
        ["keys", "add", "x", "--env", "qa"],
        ["keys", "add", "x", "--env", "dev", "--rate", "fast"],
        ["keys", "revoke", "nobody"],
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(tmp_path, args):
    from typer.testing import CliRunner

    from paddlectl.serving.cli import app

    result = CliRunner().invoke(app, [*args, "--keys", str(tmp_path / "keys.json")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "error:" in result.output
