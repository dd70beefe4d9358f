"""Atomic writes: all or nothing, with the permissions a plain open gives (or private on request)."""

from __future__ import annotations

import os
import stat

import pytest

from paddlectl.framework.utils.fileio import atomic_write, umask, unique_stem


def test_a_written_file_has_ordinary_permissions_or_stays_private(tmp_path):
    with atomic_write(tmp_path / "out.json", "w") as handle:
        handle.write("{}")
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o666 & ~umask()
    with atomic_write(tmp_path / "key", "w", private=True) as handle:
        handle.write("secret")
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o600


def test_a_failed_block_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target, "w") as handle:
        handle.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]


def test_unique_stem_numbers_names_taken_earlier_in_the_run():
    used: set[str] = set()
    assert [unique_stem(s, used) for s in ("x", "x", "y", "x", "x_2")] == ["x", "x_2", "y", "x_3", "x_2_2"]
