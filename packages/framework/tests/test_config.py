import pytest

from paddlectl.framework.config import apply_override, dump_config, load_config, parse_override, save_config
from paddlectl.framework.errors import ConfigError

CONFIG = """
Global:
  task: vision.cls
  epochs: 3
  seed: 7
Architecture:
  name: LeNet
  num_classes: 10
Optimizer:
  name: Adam
  lr: {name: Cosine, learning_rate: 0.001}
"""


@pytest.fixture
def cfg_file(tmp_path):
    path = tmp_path / "exp.yml"
    path.write_text(CONFIG)
    return path


def test_loads_and_applies_overrides_parsed_as_yaml(cfg_file):
    cfg = load_config(cfg_file, ["Global.epochs=10", "Optimizer.lr.learning_rate=1e-2", "Architecture.dims=[1, 2]"])
    assert cfg["Global"]["epochs"] == 10
    assert cfg["Optimizer"]["lr"]["learning_rate"] == 0.01
    assert cfg["Architecture"]["dims"] == [1, 2]


def test_unknown_key_in_file_suggests_the_nearest(tmp_path):
    path = tmp_path / "typo.yml"
    path.write_text("Global:\n  epoch: 3\n")
    with pytest.raises(ConfigError, match=r"unknown config key 'Global.epoch'; did you mean 'epochs'"):
        load_config(path)


def test_unknown_section_is_refused(tmp_path):
    path = tmp_path / "typo.yml"
    path.write_text("Optimiser:\n  name: Adam\n")
    with pytest.raises(ConfigError, match="did you mean 'Optimizer'"):
        load_config(path)


def test_unknown_override_key_is_refused(cfg_file):
    with pytest.raises(ConfigError, match=r"'Global.epoks'; did you mean 'epochs'"):
        load_config(cfg_file, ["Global.epoks=3"])


@pytest.mark.parametrize("text", ["Global.epochs", "=3", "Global..epochs=3", "Global.epochs=[1,"])
def test_malformed_override(text):
    with pytest.raises(ConfigError, match="override"):
        parse_override(text)


def test_override_into_a_value_is_refused(cfg_file):
    cfg = load_config(cfg_file)
    with pytest.raises(ConfigError, match="is a value, not a section"):
        apply_override(cfg, "Global.epochs.x=1")


def test_wrong_type_is_refused(cfg_file):
    with pytest.raises(ConfigError, match="'Global.epochs' must be int, got str"):
        load_config(cfg_file, ["Global.epochs=many"])


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yml")
    bad = tmp_path / "bad.yml"
    bad.write_text("Global: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML at line"):
        load_config(bad)
    listy = tmp_path / "list.yml"
    listy.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_config(listy)


def test_resolved_config_round_trips(cfg_file, tmp_path):
    cfg = load_config(cfg_file, ["Global.epochs=5"])
    out = save_config(cfg, tmp_path / "out" / "config.yml")
    assert load_config(out) == cfg
    assert dump_config(cfg).startswith("Global:")
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]
