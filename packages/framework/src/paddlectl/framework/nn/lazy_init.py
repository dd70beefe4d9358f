"""``paddle.LazyGuard``: parameters created inside it get their shape and dtype now and their
values when ``param.initialize()`` is called.

Paddle uses it to build a model too large to initialise on one device and initialise (or load)
it piece by piece. Here a lazy parameter holds zeros until ``initialize()`` draws its values from
the random stream as it is then, the order Paddle draws them in, so a seeded script gets Paddle's
numbers.
"""

from __future__ import annotations

_depth = [0]


class LazyGuard:
    """``with LazyGuard(): net = Linear(10, 10)``, then ``p.initialize()`` for each parameter."""

    def __enter__(self) -> LazyGuard:
        _depth[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _depth[0] -= 1


def lazy() -> bool:
    """Whether parameters created now defer their values."""
    return _depth[0] > 0
