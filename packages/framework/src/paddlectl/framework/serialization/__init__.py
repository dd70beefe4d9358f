"""``paddle.save`` / ``paddle.load``: our checksummed checkpoint format, plus read-only PaddlePaddle pickles.

We always write our own format (safetensors payload, JSON structure, version, SHA-256); we read it
back and also read ``.pdparams``/``.pdopt`` files written by real PaddlePaddle, through a restricted
unpickler that can only rebuild arrays and plain containers.
"""

from __future__ import annotations

import io
import os

from ..errors import CheckpointError
from ..utils.fileio import atomic_write
from .checkpoint import MAGIC, decode, encode, record_length
from .restricted_pickle import PICKLE_PREFIX, load_restricted

__all__ = ["load", "save"]


def save(obj, path, protocol: int = 4, **configs) -> None:
    """Write ``obj`` (nested dicts/lists of Tensors, ndarrays and plain values) to ``path`` atomically.

    ``protocol`` is accepted for Paddle compatibility (2, 3 or 4) and checked; our format holds no pickle.
    """
    if protocol not in (2, 3, 4):
        raise ValueError(f"paddle.save: protocol must be 2, 3 or 4, got {protocol!r}")
    data = encode(obj)
    if hasattr(path, "write"):
        path.write(data)
        return
    path = os.fspath(path)
    if not os.path.basename(path):
        raise ValueError(f"paddle.save: path {path!r} names a directory; give a file name such as 'model.pdparams'")
    with atomic_write(path) as handle:
        handle.write(data)


def load(path, return_numpy: bool = False, **configs):
    """Read what ``save`` (ours or PaddlePaddle's) wrote; Tensors come back as ndarrays if ``return_numpy``."""
    if hasattr(path, "read"):
        name, data = getattr(path, "name", "<file object>"), _one_record(path)
    else:
        name = os.fspath(path)
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise CheckpointError(f"paddle.load: {name}: no such file; check the path") from None
        except IsADirectoryError:
            raise CheckpointError(f"paddle.load: {name} is a directory; give the checkpoint file inside it") from None
    if data.startswith(MAGIC):
        return decode(data, name, return_numpy)
    if data[:1] == PICKLE_PREFIX:
        return load_restricted(io.BytesIO(data), name, return_numpy)
    raise CheckpointError(
        f"paddle.load: {name} is neither a paddlectl checkpoint nor a PaddlePaddle pickle "
        f"(it starts with {data[:8]!r}); it may be empty, truncated at the start or another kind of file"
    )


def _one_record(stream) -> bytes:
    """One checkpoint read from a stream, which is left just after it (as Paddle's pickle load
    leaves it: several objects saved into one stream load one by one); anything else is read whole."""
    head = stream.read(len(MAGIC) + 8)
    if not head.startswith(MAGIC) or len(head) < len(MAGIC) + 8:
        return head + stream.read()
    header = stream.read(int.from_bytes(head[len(MAGIC) :], "little"))
    size = record_length(header)
    return head + header + (stream.read(size) if size is not None else stream.read())
