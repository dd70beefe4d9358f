"""How the harness runs a model: the framework's Predictor, the way production serves it.

The harness never builds layers or reads weights itself; an exported model (a paddlectl
inference directory or an ``.onnx`` file) is opened with ``paddlectl.framework.inference``,
so what is measured is what is deployed.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Runner(Protocol):
    """Anything that turns a list of input arrays into a list of output arrays."""

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]: ...
