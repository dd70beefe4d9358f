"""``paddle.static.save`` / ``load`` / ``load_program_state`` / ``set_program_state``: a static
Program's parameters (``model_path.pdparams``) and its optimizers' state (``model_path.pdopt``).

Both files are ``paddle.save`` checkpoints (the project's checksummed format, no pickle), holding
``{name: array}`` by Paddle's variable names, so ``paddle.load`` reads them too and files Paddle
wrote (``.pdparams`` pickles) load through ``paddle.load``'s restricted reader. Loading matches
names: a parameter of the program missing from the file keeps its value and is reported, a shape
that differs is refused.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .. import serialization
from ..core.tensor import Tensor
from ..errors import CheckpointError, ConfigError, ShapeError
from .static_mode import Program

PARAMS, OPTIMIZER = ".pdparams", ".pdopt"


def _program(program, what: str) -> Program:
    if not isinstance(program, Program):
        raise ConfigError(f"static.{what}: program must be a paddle.static.Program, got {type(program).__name__}")
    return program


def _prefix(model_path) -> str:
    path = os.fspath(model_path)
    for suffix in (PARAMS, OPTIMIZER):
        path = path.removesuffix(suffix)
    if not os.path.basename(path):
        raise ConfigError(
            f"static: model_path {model_path!r} names a directory; give a file prefix such as 'out/model'"
        )
    return path


def _optimizers(program: Program) -> list:
    return list(dict.fromkeys(optimizer for optimizer, _ in program._training))


def save(program, model_path, protocol: int = 4, **configs) -> None:
    """Write ``program``'s parameters to ``model_path.pdparams`` and, when it trains, its
    optimizers' state to ``model_path.pdopt``."""
    program, path = _program(program, "save"), _prefix(model_path)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    serialization.save({p.name: p.numpy() for p in program.all_parameters()}, path + PARAMS, protocol)
    state = {}
    for optimizer in _optimizers(program):
        state.update(optimizer.state_dict())
    if state:
        serialization.save(state, path + OPTIMIZER, protocol)


def load_program_state(model_path, var_list=None) -> dict:
    """``{name: ndarray}`` of the parameters in ``model_path.pdparams`` (only ``var_list``'s names,
    when given)."""
    path = _prefix(model_path) + PARAMS
    state = serialization.load(path, return_numpy=True)
    if not isinstance(state, dict):
        raise CheckpointError(f"load_program_state: {path} does not hold a dict of named parameters")
    if var_list is not None:
        names = [v.name if isinstance(v, Tensor) else v for v in var_list]
        missing = [n for n in names if n not in state]
        if missing:
            raise CheckpointError(f"load_program_state: {path} has no {missing}")
        state = {n: state[n] for n in names}
    return state


def set_program_state(program, state_dict: dict) -> None:
    """Give each parameter of ``program`` the value of the same name in ``state_dict``."""
    program = _program(program, "set_program_state")
    params = program.all_parameters()
    for p in params:
        if p.name not in state_dict:
            continue
        value = np.asarray(state_dict[p.name])
        if list(value.shape) != p.shape:
            raise ShapeError(
                f"set_program_state: {p.name!r} is {p.shape} in the program, {list(value.shape)} in the state"
            )
        p.set_value(value)
    missing = [p.name for p in params if p.name not in state_dict]
    if missing:
        warnings.warn(f"set_program_state: no value for {missing}; they keep their values", stacklevel=2)


def load(program, model_path, executor=None, var_list=None) -> None:
    """Load what ``save`` wrote into ``program``: its parameters, and its optimizers' state when
    ``model_path.pdopt`` exists."""
    program, path = _program(program, "load"), _prefix(model_path)
    set_program_state(program, load_program_state(path, var_list))
    if os.path.isfile(path + OPTIMIZER) and var_list is None:
        state = serialization.load(path + OPTIMIZER)
        for optimizer in _optimizers(program):
            optimizer.set_state_dict(state)
