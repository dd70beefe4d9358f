"""``paddle.distributed.fleet.utils``."""
