"""The deep-learning framework: PaddlePaddle-compatible dynamic graph, static graph, compiler and inference on a Numba-JIT core."""

from importlib.metadata import version

__version__ = version("paddlectl-framework")
