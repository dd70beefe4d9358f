"""Keep freed array memory inside the process, as Paddle's own allocator does.

Every op returns fresh NumPy arrays, and glibc hands large blocks back to the kernel when they
are freed (``mmap``/``munmap``, and trimming the heap top), so the next op's output of the same
size page-faults all over again: on the virtual machines measured here that first touch doubled
the time of a small-image convolution. Raising glibc's mmap and trim thresholds keeps freed
blocks up to 32 MB in the heap for reuse; the process's resident memory then stays at its peak
instead of shrinking between steps. Set ``PADDLECTL_RETAIN_FREED_MEMORY=0`` to leave glibc's
defaults alone. Other C libraries are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
"""glibc's largest allowed mmap threshold on 64-bit: blocks above it still come from mmap."""
TRIM_THRESHOLD = 1 << 30


def retain_freed_memory() -> bool:
    """Apply the thresholds; True when glibc accepted them."""
    if os.environ.get("PADDLECTL_RETAIN_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None or not hasattr(libc, "gnu_get_libc_version"):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
