"""``paddle.distributed.fleet.utils``."""

from .recompute import recompute

__all__ = ["recompute"]
