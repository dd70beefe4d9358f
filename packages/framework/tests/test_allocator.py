"""Freed array memory stays in the process (glibc), unless PADDLECTL_RETAIN_FREED_MEMORY=0."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc's"
)

PROBE = """
import numpy as np
import paddlectl.framework

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

a = np.ones(16 << 18, dtype=np.float32)  # 16 MB, touched
before = rss_mb()
del a
print(before - rss_mb())
"""


def _released_mb(setting: str | None) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PADDLECTL_RETAIN_FREED_MEMORY"}
    if setting is not None:
        env["PADDLECTL_RETAIN_FREED_MEMORY"] = setting
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def test_freed_arrays_stay_in_the_process():
    assert _released_mb(None) < 4  # kept for the next op's output: no fresh page faults


def test_opt_out_leaves_glibc_defaults():
    assert _released_mb("0") > 12  # glibc's default: a 16 MB block goes back to the kernel at once


def test_retain_reports_whether_applied(monkeypatch):
    from paddlectl.framework.core.allocator import retain_freed_memory

    assert retain_freed_memory() is True
    monkeypatch.setenv("PADDLECTL_RETAIN_FREED_MEMORY", "0")
    assert retain_freed_memory() is False
