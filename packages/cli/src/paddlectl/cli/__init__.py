"""The `paddlectl` command: train, export, eval, predict, compat, license, doctor."""

from importlib.metadata import version

__version__ = version("paddlectl")
