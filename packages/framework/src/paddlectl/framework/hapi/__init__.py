"""``paddle.Model`` and ``paddle.callbacks``: the high-level training loop; ``Task``: the suites' protocol."""

from . import callbacks
from .model import Model
from .task import Task, TaskBase, compute_metrics
