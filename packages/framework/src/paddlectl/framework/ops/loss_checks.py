"""What every loss checks and how it reduces: Paddle's reduction names, dtype and label-range errors."""

from __future__ import annotations

import numpy as np

from ..core.dtype import is_floating
from ..core.tensor import Tensor
from ..errors import DTypeError
from .reduce import mean, sum

REDUCTIONS = ("none", "mean", "sum")


def check_reduction(op: str, reduction: str, allowed=REDUCTIONS) -> None:
    if reduction not in allowed:
        raise ValueError(f"{op}: reduction must be one of {', '.join(map(repr, allowed))}, got {reduction!r}")


def check_float(op: str, what: str, t: Tensor) -> None:
    if not is_floating(t.dtype):
        raise DTypeError(f"{op}: {what} must be a float tensor, got {t.dtype}; cast it with .astype('float32')")


def check_int(op: str, what: str, t: Tensor, fix: str) -> None:
    if t.dtype.kind not in "iu":
        raise DTypeError(f"{op}: {what} must be an integer tensor, got {t.dtype}; {fix}")


def check_labels(op: str, labels: np.ndarray, classes: int, ignore_index: int | None) -> None:
    """Paddle raises IndexError for a class id outside [0, classes) that is not ``ignore_index``."""
    bad = (labels < 0) | (labels >= classes)
    if ignore_index is not None:
        bad &= labels != ignore_index
    if bad.any():
        value = int(labels[bad][0])
        raise IndexError(
            f"{op}: label value {value} is outside [0, {classes}) for {classes} classes "
            f"(ignore_index={ignore_index}); fix the labels or the number of classes"
        )


def reduce_loss(out: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return mean(out)
    if reduction == "sum":
        return sum(out)
    return out
