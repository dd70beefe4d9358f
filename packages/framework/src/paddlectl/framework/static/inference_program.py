"""A static program pruned to its feeds and fetches: what ``load_inference_model``,
``deserialize_program`` and ``normalize_program`` return and ``Executor.run`` runs.

It is an IR program with its weights; ``Executor.run(program, feed={name: array}, fetch_list=...)``
feeds the inputs by name and returns the outputs asked for: the fetch targets
``load_inference_model`` returned (the program's output values), their names, or their
positions. One read from ``deserialize_program`` has its text but no weights yet, until
``deserialize_persistables`` gives it them (as Paddle's program waits for its scope to be filled).
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError
from .executor import Executor
from .ir import Program, Value
from .parser import parse_program
from .printer import print_program
from .static_mode import Executable
from .verifier import check_sizes


class InferenceProgram(Executable):
    def __init__(self, program: Program | None = None, text: str | None = None) -> None:
        self._program, self._text, self._executor = None, text, None
        if program is not None:
            self._set(program)

    def _set(self, program: Program) -> None:
        self._program, self._text = program, None
        self._executor = Executor(program)

    def attach_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Parse the text this program was read from, over ``weights`` (its persistables)."""
        if self._text is None:
            raise ConfigError("this inference program has its weights already; load another program to change them")
        self._set(check_sizes(parse_program(self._text, weights)))

    @property
    def program(self) -> Program:
        if self._program is None:
            raise ConfigError(
                "this program was read without its weights; give it them with "
                "paddle.static.deserialize_persistables(program, data, executor) first"
            )
        return self._program

    @property
    def feed_target_names(self) -> list[str]:
        return self.program.input_names

    @property
    def fetch_targets(self) -> list[Value]:
        return self.program.outputs

    def text(self) -> str:
        """The program in IR text form (without weights)."""
        return self._text if self._text is not None else print_program(self._program)

    def __str__(self) -> str:
        return self.text()

    def _run(self, feed: dict, fetch_list: list, return_numpy: bool) -> list:
        program = self.program
        names = program.input_names
        missing = [n for n in names if n not in feed]
        if missing:
            raise ConfigError(f"Executor.run: feed lacks {missing}; this program takes {names}")
        unknown = sorted(set(feed) - set(names))
        if unknown:
            raise ConfigError(f"Executor.run: feed names {unknown} are not inputs of this program, which takes {names}")
        arrays = [np.asarray(feed[n], dtype=v.dtype) for n, v in zip(names, program.inputs, strict=True)]
        outputs = self._executor.run(arrays)
        picked = [outputs[self._position(target)] for target in fetch_list]
        return [np.asarray(r) if return_numpy else Tensor._wrap(np.asarray(r)) for r in picked]

    def _position(self, target) -> int:
        outputs = self.program.outputs
        for i, value in enumerate(outputs):
            if target is value or target == value.name:
                return i
        if isinstance(target, int) and not isinstance(target, bool) and 0 <= target < len(outputs):
            return target
        raise ConfigError(
            f"fetch_list: {target!r} is not an output of this program; fetch the targets load_inference_model "
            f"returned, or their names {[v.name for v in outputs]}"
        )
