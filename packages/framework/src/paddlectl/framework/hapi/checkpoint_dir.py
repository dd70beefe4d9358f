"""Training checkpoints as directories that appear whole or not at all.

A checkpoint is ``model.pdparams`` + ``optimizer.pdopt`` (accumulators and the LR scheduler) +
``state.json`` (epoch/step counters, RNG states, best metric) + ``config.yml`` (the resolved
config). It is written into a hidden temporary directory beside the target and renamed into
place, so a crash or Ctrl-C while saving leaves the previous checkpoint intact.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import save_config
from ..errors import CheckpointError
from ..serialization import load, save
from ..utils.fileio import atomic_write, umask

MODEL_FILE = "model.pdparams"
OPTIMIZER_FILE = "optimizer.pdopt"
STATE_FILE = "state.json"
CONFIG_FILE = "config.yml"
FILES = (MODEL_FILE, OPTIMIZER_FILE, STATE_FILE, CONFIG_FILE)
STATE_FORMAT = "paddlectl-train-state"
STATE_VERSION = 2  # 2: the RNG state holds Paddle's engine beside NumPy's


@dataclass
class Checkpoint:
    model: dict
    optimizer: dict
    state: dict[str, Any]
    path: Path


def _make_tmp(target: Path) -> Path:
    """A hidden temporary directory beside ``target`` with the permissions a plain mkdir gives."""
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp."))
    tmp.chmod(0o777 & ~umask())
    return tmp


def replace_dir(tmp: Path, target: Path) -> None:
    """Put ``tmp`` at ``target``; the old ``target`` is removed only once the new one is in place."""
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old."))
        old.rmdir()
        os.replace(target, old)
    os.replace(tmp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write(target: str | os.PathLike, model_state: dict, optimizer_state: dict, state: dict, config: dict) -> Path:
    """Write a complete checkpoint at ``target`` atomically."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_tmp(target)
    try:
        save(model_state, tmp / MODEL_FILE)
        save(optimizer_state, tmp / OPTIMIZER_FILE)
        save_config(config, tmp / CONFIG_FILE)
        with atomic_write(tmp / STATE_FILE, "w", encoding="utf-8") as handle:
            json.dump({"format": STATE_FORMAT, "version": STATE_VERSION, **state}, handle, indent=1)
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def publish(source: Path, target: Path) -> Path:
    """Make ``target`` a copy of the checkpoint ``source`` (hard links: checkpoint files are never modified)."""
    tmp = _make_tmp(target)
    try:
        for name in FILES:
            try:
                os.link(source / name, tmp / name)
            except OSError:
                shutil.copy2(source / name, tmp / name)
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def locate(path: str | os.PathLike) -> Path:
    """The checkpoint directory ``path`` names: itself, or ``path/latest`` for a training output dir."""
    path = Path(path)
    if (path / STATE_FILE).is_file():
        return path
    if (path / "latest" / STATE_FILE).is_file():
        return path / "latest"
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist; pass a directory such as output/<run>/latest")
    raise CheckpointError(
        f"{str(path)!r} is not a training checkpoint (no {STATE_FILE}); pass a directory that "
        f"`paddlectl train` wrote, such as output/<run>/latest, best or epoch_N"
    )


def read(path: str | os.PathLike) -> Checkpoint:
    """Read and check a whole checkpoint; CheckpointError says which part is missing or damaged."""
    path = locate(path)
    for name in FILES:
        if not (path / name).is_file():
            raise CheckpointError(f"checkpoint {str(path)!r} lacks {name}; it is incomplete, use another checkpoint")
    try:
        state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CheckpointError(f"{path / STATE_FILE}: not valid JSON ({exc}); the checkpoint is damaged") from None
    if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
        raise CheckpointError(
            f"{path / STATE_FILE} is not a version-{STATE_VERSION} {STATE_FORMAT} file; "
            "resume with the paddlectl release that wrote it"
        )
    return Checkpoint(load(path / MODEL_FILE), load(path / OPTIMIZER_FILE), state, path)


def model_weights(path: str | os.PathLike) -> dict:
    """The model state of a checkpoint directory, or of a ``.pdparams`` file given directly."""
    path = Path(path)
    if path.is_file():
        return load(path)
    if (path / MODEL_FILE).is_file():
        return load(path / MODEL_FILE)
    if (path / "best" / MODEL_FILE).is_file():
        return load(path / "best" / MODEL_FILE)
    if not path.exists():
        raise CheckpointError(
            f"weights {str(path)!r} do not exist; pass a checkpoint directory (output/<run>/best) or a .pdparams file"
        )
    raise CheckpointError(
        f"{str(path)!r} holds no {MODEL_FILE}; pass a checkpoint directory (output/<run>/best) or a .pdparams file"
    )
