"""Utilities that Paddle exposes as ``paddle.utils``."""

from .run_check import run_check

__all__ = ["run_check"]
