"""Shared by the benchmark scripts: a busy neighbour, one other process that keeps a core busy
(as a second job, a DataLoader worker or a CI neighbour does), so a workload's time beside it can
be set against its idle time. The child spins for at most ``LIMIT_S`` even if this process dies."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time

LIMIT_S = 600
SPIN = "import time\nend = time.monotonic() + float(__import__('sys').argv[1])\nwhile time.monotonic() < end: pass"


@contextlib.contextmanager
def busy_neighbour():
    """One spinning child process for the duration of the block."""
    child = subprocess.Popen([sys.executable, "-c", SPIN, str(LIMIT_S)])
    time.sleep(0.3)  # its interpreter is up and spinning before the workload starts
    try:
        yield
    finally:
        child.kill()
        child.wait()
