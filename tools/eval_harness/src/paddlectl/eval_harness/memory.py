"""Peak resident memory of this process, as the kernel counts it."""

from __future__ import annotations

import resource
import sys
from pathlib import Path


def peak_rss_bytes() -> int:
    """The high-water mark of resident memory (VmHWM), falling back to getrusage."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024
