"""A tiny speech.asr config on the committed clips (tests/data), and a model trained and exported from it."""

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import yaml
from typer.testing import CliRunner

from paddlectl.cli.app import app

DATA = Path(__file__).with_name("data")
CONFIGS = Path(__file__).parents[1] / "configs"


def tiny_config(run: Path, encoder: str = "ds2_digits") -> dict:
    """The shipped config with the test clips as both splits and a small encoder (seconds, not minutes)."""
    config = yaml.safe_load((CONFIGS / f"{encoder}.yml").read_text(encoding="utf-8"))
    config["Global"].update(output_dir=str(run), epochs=1, log_interval=1)
    small = {
        "DeepSpeech2": {"hidden": 16, "num_layers": 1},
        "Conformer": {"dim": 16, "heads": 2, "ffn_dim": 32, "num_blocks": 1},
    }
    config["Architecture"]["Encoder"].update(small[config["Architecture"]["Encoder"]["name"]])
    for split in ("Train", "Eval"):
        config[split]["dataset"].update(manifest=str(DATA / "manifest.jsonl"), max_seconds=2.5)
        config[split]["loader"]["batch_size"] = 5
    config["PostProcess"]["vocab"] = str(DATA / "vocab.txt")
    return config


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def train_and_export(root: Path, encoder: str = "ds2_digits") -> Path:
    """Train one epoch, export with verification; the export's directory."""
    config = root / "asr.yml"
    config.write_text(yaml.safe_dump(tiny_config(root / "run", encoder)), encoding="utf-8")
    result = invoke("train", "-c", config, "-q")
    assert result.exit_code == 0, result.output
    result = invoke("export", "-c", config, "-w", root / "run" / "best", "-o", root / "model", "--verify")
    assert result.exit_code == 0, result.output
    return root / "model"


@functools.cache
def shared_model(encoder: str = "ds2_digits") -> Path:
    """One trained and exported tiny model for every test module of the session (training is the slow part)."""
    root = Path(tempfile.mkdtemp(prefix=f"asr_{encoder}_"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return train_and_export(root, encoder)
