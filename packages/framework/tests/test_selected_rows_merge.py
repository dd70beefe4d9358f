"""``SelectedRows.merged``: one entry per distinct row, ascending, duplicates summed, whether the rows
are found by marking a small table's rows or by NumPy's sort (tall tables, rows outside the table)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from paddlectl.framework.core.selected_rows import SelectedRows, _distinct


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 50), st.lists(st.integers(-3, 60), min_size=1, max_size=40))
def test_distinct_rows_equal_numpy_unique(height, rows):
    rows = np.asarray(rows, np.int64)
    expected_rows, expected_inverse = np.unique(rows, return_inverse=True)
    got_rows, got_inverse = _distinct(rows, height)
    np.testing.assert_array_equal(got_rows, expected_rows)
    np.testing.assert_array_equal(got_inverse.reshape(-1), expected_inverse.reshape(-1))
    assert got_rows.dtype == np.int64


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.lists(st.integers(0, 29), min_size=1, max_size=60), st.integers(0, 2**31 - 1))
def test_merged_sums_duplicates_as_the_dense_gradient_does(height, rows, seed):
    rows = [r % height for r in rows]
    values = np.random.default_rng(seed).standard_normal((len(rows), 3)).astype(np.float32)
    grad = SelectedRows(rows, values, height)
    merged = grad.merged()
    assert merged.rows() == sorted(set(rows))
    np.testing.assert_allclose(merged.to_dense().numpy(), grad.to_dense().numpy(), rtol=1e-6, atol=1e-6)
