"""``paddle.amp.debugging``: the first op whose output holds NaN or Inf, named with its layer.

``enable_tensor_checker(TensorCheckerConfig(True))`` checks every op's float outputs as it runs
(through the same dispatch hook as auto_cast) and, at the first NaN/Inf, names the op, its dtype
and shape, and the layer running it (found on the Python stack: the innermost ``Layer.forward``,
with its path from the outermost one), which is what Paddle's ``FLAGS_check_nan_inf`` prints.
``CHECK_NAN_INF_AND_ABORT`` raises; ``CHECK_NAN_INF`` warns once per op and goes on;
``CHECK_ALL_FOR_OVERFLOW`` also warns where a float32 output would overflow float16.
"""

from __future__ import annotations

import enum
import sys
import warnings

import numpy as np

from ..core.dtype import bfloat16, float32
from ..errors import ConfigError, PaddlectlError
from ..nn.layer.base import Layer
from .policy import AMP

_FP16_MAX = float(np.finfo(np.float16).max)


class NumericsError(PaddlectlError, RuntimeError):
    """An op produced NaN or Inf while the tensor checker aborts on them."""


class DebugMode(enum.Enum):
    """Paddle's ``paddle.amp.debugging.DebugMode`` values this checker implements."""

    CHECK_NAN_INF_AND_ABORT = 0
    CHECK_NAN_INF = 1
    CHECK_ALL_FOR_OVERFLOW = 2


class TensorCheckerConfig:
    """What to check (Paddle's names): ``checked_op_list``/``skipped_op_list`` by op name."""

    def __init__(
        self,
        enable,
        debug_mode=DebugMode.CHECK_NAN_INF_AND_ABORT,
        output_dir=None,
        checked_op_list=None,
        skipped_op_list=None,
        debug_step=None,
        stack_height_limit=1,
    ):
        if not isinstance(debug_mode, DebugMode):
            raise ConfigError(
                f"TensorCheckerConfig: debug_mode must be one of {[m.name for m in DebugMode]}, got {debug_mode!r}"
            )
        if output_dir is not None:
            raise ConfigError(
                "TensorCheckerConfig: output_dir (dumping tensors to files) is not supported; leave it None"
            )
        self.enable = bool(enable)
        self.debug_mode = debug_mode
        self.checked = frozenset(checked_op_list or ())
        self.skipped = frozenset(skipped_op_list or ())
        self.warned: set[str] = set()

    def check(self, op_name: str, out) -> None:
        if op_name in self.skipped or (self.checked and op_name not in self.checked):
            return
        for array in (o._data for o in (out if isinstance(out, tuple) else (out,))):
            if not (array.dtype.kind == "f" or array.dtype == bfloat16):
                continue
            wide = array.astype(float32) if array.dtype == bfloat16 else array
            nan, inf = int(np.isnan(wide).sum()), int(np.isinf(wide).sum())
            if nan or inf:
                self._report(f"{nan} NaN and {inf} Inf first appear in the output of op '{op_name}'", op_name, array)
                return
            if self.debug_mode is DebugMode.CHECK_ALL_FOR_OVERFLOW and array.dtype == float32 and array.size:
                peak = float(np.abs(wide).max())
                if peak > _FP16_MAX:
                    self._warn(f"op '{op_name}' outputs {peak:.4g}, past float16's {_FP16_MAX:g}", op_name, array)

    def _report(self, what: str, op_name: str, array) -> None:
        if self.debug_mode is DebugMode.CHECK_NAN_INF_AND_ABORT:
            raise NumericsError(
                _message(what, array) + "; see which input was already extreme, or lower the loss scale"
            )
        self._warn(what, op_name, array)

    def _warn(self, what: str, op_name: str, array) -> None:
        if op_name not in self.warned:
            self.warned.add(op_name)
            warnings.warn(_message(what, array), RuntimeWarning, stacklevel=4)


def _message(what: str, array) -> str:
    return f"{what} ({array.dtype.name}, shape {list(array.shape)}) in {current_layer()}"


def current_layer() -> str:
    """The innermost running ``Layer.forward`` as ``layer 'path' (Class)``, path from the outermost."""
    chain = []
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self") if frame.f_code.co_name == "forward" else None
        if isinstance(owner, Layer) and (not chain or chain[-1] is not owner):
            chain.append(owner)
        frame = frame.f_back
    if not chain:
        return "no layer (a bare op call)"
    root, inner = chain[-1], chain[0]
    path = next((n for n, sub in root.named_sublayers() if sub is inner), None) if inner is not root else None
    where = f"'{path}' of {type(root).__name__}" if path else f"'{inner.full_name()}'"
    return f"layer {where} ({type(inner).__name__})"


def enable_tensor_checker(checker_config: TensorCheckerConfig) -> None:
    """Check every op's outputs from now on, as ``checker_config`` says."""
    if not isinstance(checker_config, TensorCheckerConfig):
        raise ConfigError("enable_tensor_checker: pass a paddle.amp.debugging.TensorCheckerConfig")
    AMP.checker = checker_config if checker_config.enable else None
    AMP.refresh()


def disable_tensor_checker() -> None:
    """Stop checking op outputs."""
    AMP.checker = None
    AMP.refresh()
