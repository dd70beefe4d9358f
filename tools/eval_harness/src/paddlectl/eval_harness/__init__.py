"""Evaluation harness: accuracy, latency, memory and cost in MLflow, with CI gates."""

from importlib.metadata import version

__version__ = version("paddlectl-eval-harness")
