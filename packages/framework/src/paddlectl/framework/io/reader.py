"""``paddle.batch``: Paddle's reader decorator from before DataLoader. A reader is a function
returning an iterator of samples; ``batch(reader, n)`` is one returning lists of ``n`` of them."""

from __future__ import annotations

from ..errors import ConfigError


def batch(reader, batch_size: int, drop_last: bool = False):
    """A reader of lists of ``batch_size`` samples from ``reader`` (the last one shorter unless
    ``drop_last``)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ConfigError(f"batch: batch_size should be a positive integer, got {batch_size!r}")

    def batch_reader():
        items = []
        for sample in reader():
            items.append(sample)
            if len(items) == batch_size:
                yield items
                items = []
        if items and not drop_last:
            yield items

    return batch_reader
