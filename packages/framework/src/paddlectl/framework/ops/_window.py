"""Sliding-window geometry that convolution and pooling share: Paddle's padding forms and output sizes."""

from __future__ import annotations

from ..errors import ShapeError


def as_tuple(op: str, name: str, value, n: int) -> tuple[int, ...]:
    """An int or a sequence of ``n`` ints (Paddle's ``convert_to_list``)."""
    if isinstance(value, int):
        return (int(value),) * n
    values = tuple(int(v) for v in value)
    if len(values) != n:
        raise ShapeError(f"{op}: {name} must be an int or {n} ints, got {list(values)}")
    return values


def normalize_padding(op: str, padding, n: int, channel_last: bool = False):
    """Paddle's padding forms as ``'SAME'``, ``'VALID'`` or ``(before_0, after_0, before_1, after_1, ...)``.

    Accepted: a string, an int, ``n`` ints, ``2n`` ints (before/after per dim) or ``n + 2`` pairs
    that include zero pairs for the batch and channel dims."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "VALID"):
            raise ShapeError(f"{op}: padding string must be 'SAME' or 'VALID', got {padding!r}")
        return mode
    if isinstance(padding, int):
        pads = (int(padding),) * (2 * n)
    else:
        items = list(padding)
        if len(items) == n + 2 and all(isinstance(p, list | tuple) for p in items):
            outer = [items[0], items[-1]] if channel_last else items[:2]
            if any(int(v) != 0 for pair in outer for v in pair):
                raise ShapeError(
                    f"{op}: padding {items} pads the batch or channel dim; only spatial dims can be padded"
                )
            spatial = items[1:-1] if channel_last else items[2:]
            pads = tuple(int(v) for pair in spatial for v in pair)
        elif len(items) == 2 * n:
            pads = tuple(int(v) for v in items)
        elif len(items) == n:
            pads = tuple(int(v) for v in items for _ in range(2))
        else:
            raise ShapeError(
                f"{op}: padding {items} has {len(items)} entries; give an int, {n} ints, {2 * n} ints "
                f"(before/after per dim), {n + 2} [before, after] pairs, 'SAME' or 'VALID'"
            )
    if any(p < 0 for p in pads):
        raise ShapeError(f"{op}: padding must be non-negative, got {list(pads)}")
    return pads


def resolve_padding(padding, sizes, kernel, stride, dilation):
    """Explicit pads and the effective dilation; ``'SAME'`` keeps ``ceil(size / stride)`` outputs and,
    as in Paddle, resets dilation to 1."""
    if padding == "VALID":
        return (0,) * (2 * len(sizes)), dilation
    if padding != "SAME":
        return padding, dilation
    pads = []
    for size, k, s in zip(sizes, kernel, stride, strict=True):
        if s == 1:  # k - 1 whatever the size, so a symbolic size (an imported model's H, W) works too
            total = k - 1
        else:
            out = (size + s - 1) // s
            total = max((out - 1) * s + k - size, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads), (1,) * len(sizes)


def out_size(size, k: int, s: int, before: int, after: int, d: int = 1, ceil_mode: bool = False):
    """Windows along one dim; symbolic sizes (tracing) give a symbolic expression."""
    span = d * (k - 1) + 1
    if not isinstance(size, int):
        return f"({size}+{before + after}-{span}{'+' + str(s - 1) if ceil_mode else ''})//{s}+1"
    extra = s - 1 if ceil_mode else 0
    return (size + before + after - span + extra) // s + 1
