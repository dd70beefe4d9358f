"""Cached kernels are stamped with the helpers they compile in, and vector copies move exactly their run."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from paddlectl.framework.kernels import cache_stamp, pixel_tiles
from paddlectl.framework.kernels.gemm import copy_run


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package directory of kernel modules standing in for this one (the caches cleared around it)."""
    package = tmp_path / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("def fill(x):\n    x[:] = 1\n")
    (package / "deep.py").write_text("SCALE = 2\n")
    (package / "kernel.py").write_text("from . import njit\nfrom .helper import (\n    fill,\n)\n")
    monkeypatch.setattr(cache_stamp, "PACKAGE_DIR", package.resolve())
    monkeypatch.setattr(cache_stamp, "PACKAGE", "fake.kernels")
    for cached in (cache_stamp._imports, cache_stamp.helpers_digest, cache_stamp._source):
        cached.cache_clear()
    yield package
    for cached in (cache_stamp._imports, cache_stamp.helpers_digest, cache_stamp._source):
        cached.cache_clear()


def _digest(path):
    for cached in (cache_stamp._imports, cache_stamp.helpers_digest, cache_stamp._source):
        cached.cache_clear()
    return cache_stamp.helpers_digest(path.resolve())


def test_a_kernels_stamp_changes_with_a_helper_it_imports_and_not_with_others(fake_package):
    kernel = fake_package / "kernel.py"
    assert {p.name for p in cache_stamp._imports(kernel.resolve())} == {"__init__.py", "helper.py"}
    before = _digest(kernel)
    (fake_package / "deep.py").write_text("SCALE = 3\n")  # not imported: the stamp stays
    assert _digest(kernel) == before
    (fake_package / "helper.py").write_text("from .deep import SCALE\n\ndef fill(x):\n    x[:] = SCALE\n")
    changed = _digest(kernel)
    assert changed != before
    (fake_package / "deep.py").write_text("SCALE = 4\n")  # imported through the helper now
    assert _digest(kernel) not in (before, changed)


def test_a_module_importing_the_package_absolutely_is_stamped_and_others_are_not(tmp_path, fake_package):
    generated = tmp_path / "fused_kernel.py"
    generated.write_text("import numpy as np\nfrom fake.kernels import helper\n")
    assert {p.name for p in cache_stamp._imports(generated.resolve())} == {"__init__.py", "helper.py"}
    unrelated = tmp_path / "other.py"
    unrelated.write_text("import numpy as np\n")
    assert cache_stamp.helpers_digest(unrelated.resolve()) is None


def test_the_packages_kernels_cache_through_the_stamped_locator():
    locator = pixel_tiles.pixel_tiles.parallel._cache._impl.locator
    assert isinstance(locator, cache_stamp.StampedLocator)
    stamp = locator.get_source_stamp()
    assert stamp[1] == cache_stamp.helpers_digest(locator._path)


@numba.njit
def _copy(dst, d0, src, s0, n):
    copy_run(dst, d0, src, s0, n)


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 40, 64])
def test_copy_run_moves_its_run_and_nothing_around_it(n):
    src = np.arange(100, dtype=np.float32)
    dst = np.full(120, -1.0, dtype=np.float32)
    _copy(dst, 7, src, 3, n)
    expected = np.full(120, -1.0, dtype=np.float32)
    expected[7 : 7 + n] = src[3 : 3 + n]
    np.testing.assert_array_equal(dst, expected)
