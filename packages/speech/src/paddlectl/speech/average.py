"""Checkpoint averaging, as PaddleSpeech's ``avg_model.py`` does before export: the element-wise mean
of several checkpoints' weights (typically a run's last epochs).

Why: on this corpus two seeds of one configuration differ by 0.05 in dev WER and by two real
digits, and the last epochs of a run wander about the same point; their mean sits nearer it
(Izmailov et al., 2018's weight averaging), at no training cost.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import CheckpointError, ConfigError
from paddlectl.framework.hapi import checkpoint_dir
from paddlectl.framework.serialization import save


def average_weights(checkpoints: Sequence[str | os.PathLike]) -> dict[str, np.ndarray]:
    """The mean of the model weights of ``checkpoints`` (directories or ``.pdparams`` files), name by name;
    they must hold the same names and shapes (one architecture)."""
    if not checkpoints:
        raise ConfigError("give at least one checkpoint to average (e.g. output/run/epoch_10 output/run/epoch_11)")
    # a trainer's checkpoint holds Tensors, a saved average ndarrays: np.asarray reads both
    states = [
        {name: np.asarray(value) for name, value in checkpoint_dir.model_weights(path).items()} for path in checkpoints
    ]
    names = set(states[0])
    total = {name: value.astype(np.float64) for name, value in states[0].items()}
    for path, state in zip(checkpoints[1:], states[1:], strict=True):
        if set(state) != names:
            raise CheckpointError(
                f"{os.fspath(path)!r} holds other weights than {os.fspath(checkpoints[0])!r} "
                f"({sorted(names ^ set(state))[0]}); average checkpoints of one architecture"
            )
        for name, array in state.items():
            if array.shape != total[name].shape:
                raise CheckpointError(
                    f"{os.fspath(path)!r}: {name} has shape {list(array.shape)}, {os.fspath(checkpoints[0])!r} "
                    f"{list(total[name].shape)}; average checkpoints of one architecture"
                )
            total[name] += array
    return {name: (value / len(states)).astype(states[0][name].dtype) for name, value in total.items()}


def write_average(checkpoints: Sequence[str | os.PathLike], out: str | os.PathLike) -> Path:
    """``average_weights(checkpoints)`` saved as a ``.pdparams`` file that export and eval take as weights."""
    out = Path(out)
    if out.suffix != ".pdparams":
        raise ConfigError(f"the averaged weights go to a .pdparams file, got {os.fspath(out)!r}")
    save(average_weights(checkpoints), out)
    return out
