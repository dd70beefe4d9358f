"""``paddle.Model`` and ``paddle.callbacks``: the high-level training loop."""

from . import callbacks
from .model import Model
