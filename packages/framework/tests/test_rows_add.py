"""kernels.index.rows_add: np.add.at over rows, compiled for float32/float64 (embedding and
SelectedRows gradients), NumPy's for other dtypes and for an index out of range."""

import numpy as np
import pytest

from paddlectl.framework.kernels.index import rows_add


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_rows_add_matches_add_at(dtype):
    rng = np.random.default_rng(0)
    out = rng.standard_normal((10, 3)).astype(dtype)
    expected = out.copy()
    index = np.array([1, 1, -1, 9, 0, 3, 1])  # repeats accumulate, -1 is the last row
    values = rng.standard_normal((7, 3)).astype(dtype)
    rows_add(out, index, values)
    np.add.at(expected, index, values)
    np.testing.assert_array_equal(out, expected)


def test_rows_add_empty_index_leaves_out():
    out = np.ones((4, 3), np.float32)
    rows_add(out, np.zeros(0, np.int64), np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(out, np.ones((4, 3), np.float32))


def test_rows_add_out_of_range_raises_not_writes():
    out = np.zeros((4, 3), np.float32)
    with pytest.raises(IndexError):
        rows_add(out, np.array([0, 4]), np.ones((2, 3), np.float32))
