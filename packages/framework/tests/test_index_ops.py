"""Indexing ops and Tensor __getitem__/__setitem__, against real Paddle and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from test_shape_ops import compare, r, single

import paddlectl.framework as ours
from paddlectl.framework.core.op import Spec
from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.framework.ops import index as index_ops
from paddlectl.framework.ops import sorting, subscript

F32 = np.dtype("float32")


def i64(*values):
    return np.array(values, dtype=np.int64)


CASES = {
    "gather_axis0_dups": (lambda P, x, i: P.gather(x, i), [r(4, 3), i64(2, 0, 2)]),
    "gather_axis1": (lambda P, x, i: P.gather(x, i, axis=1), [r(2, 4, 2), i64(3, 1)]),
    "gather_0d_index": (lambda P, x, i: P.gather(x, i, axis=-1), [r(3, 4), np.array(2, dtype=np.int64)]),
    "gather_method": (lambda P, x, i: x.gather(i), [r(3, 2), i64(1)]),
    "index_select": (lambda P, x, i: P.index_select(x, i, axis=1), [r(2, 5), i64(4, 4, 0)]),
    "index_select_empty": (lambda P, x, i: P.index_select(x, i, axis=0), [r(3, 2), np.zeros(0, dtype=np.int64)]),
    "gather_nd": (lambda P, x, i: P.gather_nd(x, i), [r(3, 4, 2), np.array([[0, 1], [2, 3], [0, 1]])]),
    "gather_nd_prefix": (lambda P, x, i: P.gather_nd(x, i), [r(3, 4), np.array([[[2]], [[0]]])]),
    "scatter_overwrite": (lambda P, x, i, u: P.scatter(x, i, u), [r(4, 2), i64(3, 0), r(2, 2)]),
    "scatter_overwrite_dups": (lambda P, x, i, u: P.scatter(x, i, u), [r(3, 2), i64(1, 1, 0), r(3, 2)]),
    "scatter_accumulate_dups": (
        lambda P, x, i, u: P.scatter(x, i, u, overwrite=False),
        [r(3, 2), i64(1, 1, 0), r(3, 2)],
    ),
    "scatter_nd_add_dups": (
        lambda P, x, i, u: P.scatter_nd_add(x, i, u),
        [r(3, 4), np.array([[1, 2], [1, 2], [0, 0]]), r(3)],
    ),
    "scatter_nd_add_rows": (lambda P, x, i, u: P.scatter_nd_add(x, i, u), [r(3, 4), np.array([[2], [2]]), r(2, 4)]),
    "masked_fill_scalar": (lambda P, x, m: P.masked_fill(x, m, -1.5), [r(2, 3), np.array([True, False, True])]),
    "masked_fill_int_mask": (lambda P, x, m: P.masked_fill(x, m, 2.0), [r(2, 3), np.array([[1], [0]])]),
    "masked_select": (lambda P, x, m: P.masked_select(x, m), [r(2, 3), np.array([True, False, True])]),
    "masked_select_broadcast_x": (lambda P, x, m: x.masked_select(m), [r(1, 3), np.array([[1, 0, 1], [0, 1, 1]]) > 0]),
    "take_along_axis": (lambda P, x, i: P.take_along_axis(x, i, 1), [r(2, 4), np.array([[0, 3, 3], [1, 1, 2]])]),
    "take_along_axis_broadcast": (lambda P, x, i: P.take_along_axis(x, i, 0), [r(3, 4), np.array([[2, 0, 1, 1]])]),
    "put_along_axis_assign": (
        lambda P, x, i, v: P.put_along_axis(x, i, v, 1),
        [r(2, 4), np.array([[0, 3], [1, 2]]), r(2, 2)],
    ),
    "put_along_axis_add": (
        lambda P, x, i, v: P.put_along_axis(x, i, v, 0, reduce="add"),
        [r(3, 2), np.array([[0, 2], [0, 2]]), r(2, 2)],
    ),
    "put_along_axis_mul": (
        lambda P, x, i, v: P.put_along_axis(x, i, v, 1, reduce="multiply"),
        [r(2, 3), np.array([[0], [2]]), r(2, 1)],
    ),
    "put_along_axis_mean": (
        lambda P, x, i, v: P.put_along_axis(x, i, v, 0, reduce="mean"),
        [r(3, 2), np.array([[0, 2], [0, 2]]), r(2, 2)],
    ),
    "put_along_axis_mean_exclusive": (
        lambda P, x, i, v: P.put_along_axis(x, i, v, 1, reduce="mean", include_self=False),
        [r(2, 3), np.array([[0, 0], [2, 1]]), r(2, 2)],
    ),
    "put_along_axis_scalar": (lambda P, x, i: P.put_along_axis(x, i, 2.0, 1), [r(2, 3), np.array([[1], [0]])]),
    "topk": (lambda P, x: P.topk(x, 2), [r(3, 5)]),
    "topk_smallest_axis0": (lambda P, x: P.topk(x, 3, axis=0, largest=False), [r(4, 2)]),
    "topk_small_k_of_long_axis": (lambda P, x: P.topk(x, 3, axis=1), [r(3, 40, 2)]),
    "topk_small_k_smallest": (lambda P, x: P.topk(x, 2, largest=False), [r(2, 30)]),
    "sort": (lambda P, x: P.sort(x, axis=0), [r(4, 3)]),
    "sort_descending": (lambda P, x: x.sort(descending=True), [r(2, 5)]),
    "argsort": (lambda P, x: (P.argsort(x), P.argsort(x, axis=0, descending=True)), [r(3, 4)]),
}


@pytest.mark.parametrize("case", CASES)
def test_matches_paddle(real_paddle, case):
    fn, arrays = CASES[case]
    compare(real_paddle, fn, *arrays)


@pytest.mark.parametrize(
    "case", [c for c in CASES if "empty" not in c and "argsort" not in c and "overwrite_dups" not in c]
)
def test_gradients_match_finite_differences(gradcheck, case):
    fn, arrays = CASES[case]
    floats = [k for k, a in enumerate(arrays) if a.dtype.kind == "f"]

    def with_constants(*tensors):
        full = list(arrays)
        for k, t in zip(floats, tensors, strict=True):
            full[k] = t
        args = [a if k in floats else ours.to_tensor(a) for k, a in enumerate(full)]
        return single(lambda P, *xs: fn(P, *xs))(*args)

    gradcheck(with_constants, *[arrays[k] for k in floats])


def test_ties_sort_stably_as_paddle(real_paddle):
    x = np.array([[3, 1, 3, 2, 1], [0, 0, 0, 0, 0]], dtype=np.float32)
    compare(real_paddle, lambda P, t: (P.argsort(t, descending=True), P.argsort(t), P.topk(t[0], 3)[1]), x)


def test_masked_fill_with_a_tensor_value(real_paddle, gradcheck):
    """Paddle 3.3.1 (CPU) returns a zero gradient for a tensor ``value``; ours is the true one,
    checked by finite differences, so only the output and x's gradient are compared with Paddle."""
    x, mask, v = r(2, 3), np.array([[True], [False]]), np.array(0.25, dtype=np.float32)
    compare(real_paddle, lambda P, a, m: P.masked_fill(a, m, P.to_tensor(v)), x, mask)
    fn = lambda a, b: ours.masked_fill(a, ours.to_tensor(mask), b)  # noqa: E731
    gradcheck(fn, x, v)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_put_along_axis_extrema_split_ties_like_paddle(real_paddle, gradcheck, reduce, include_self):
    """Paddle shares the gradient evenly among every entry equal to the result (ties on purpose)."""
    arr = np.array([[1.0, 5.0, 2.0], [0.0, -1.0, 4.0]], dtype=np.float32)
    values = np.array([[5.0, 5.0, 3.0, 0.0], [-1.0, 7.0, -1.0, 4.0]], dtype=np.float32)
    idx = np.array([[1, 1, 2, 2], [1, 0, 1, 2]])

    def fn(P, a, i, v):
        return P.put_along_axis(a, i, v, 1, reduce, include_self)

    compare(real_paddle, fn, arr, idx, values)
    gradcheck(lambda a, v: fn(ours, a, ours.to_tensor(idx), v), r(2, 3), r(2, 4))


def test_nonzero_and_single_argument_where(real_paddle):
    x = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], dtype=np.float32)
    compare(real_paddle, lambda P, t: P.nonzero(t), x)
    compare(real_paddle, lambda P, t: P.nonzero(t, as_tuple=True), x)
    compare(real_paddle, lambda P, t: P.where(t > 0), x)
    compare(real_paddle, lambda P, t: P.nonzero(t), np.zeros((2, 0), dtype=np.float32))


def test_one_hot_matches_paddle(real_paddle):
    labels = np.array([[0, 3], [2, 1]], dtype=np.int64)
    compare(real_paddle, lambda P, t: P.nn.functional.one_hot(t, 4), labels)


# ----- __getitem__ ---------------------------------------------------------------------------

GETITEM = {
    "int": lambda x: x[1],
    "negative_int": lambda x: x[-1, 0],
    "slices": lambda x: x[:, 1:3],
    "negative_step": lambda x: x[::-1, :, ::-2],
    "step_out_of_bounds": lambda x: x[1:100:2, -100:],
    "none_ellipsis": lambda x: x[None, ..., 1, None],
    "ellipsis_only": lambda x: x[...],
    "int_list": lambda x: x[[2, 0, 2]],
    "int_lists_pair": lambda x: x[[0, 2], [1, 3]],
    "int_tensor_dups": lambda x: x[:, _idx(x, [3, 3, 0])],
    "int_tensor_2d": lambda x: x[_idx(x, [[0, 1], [2, 2]])],
    "mixed_separated": lambda x: x[[0, 1], :, [1, 0]],
    "mixed_adjacent": lambda x: x[1:, [0, 3], 0],
    "bool_mask_full": lambda x: x[x > 0],
    "bool_mask_rows": lambda x: x[_bool(x, [True, False, True])],
    "bool_mask_slice": lambda x: x[:, _bool(x, [False, True, True, False])],
    "empty_slice": lambda x: x[2:1],
    "zero_d_tensor": lambda x: x[_idx(x, 1)],
}


def _module(x):
    return ours if isinstance(x, ours.Tensor) else __import__("paddle")


def _idx(x, values):
    return _module(x).to_tensor(np.array(values, dtype=np.int64))


def _bool(x, values):
    return _module(x).to_tensor(np.array(values, dtype=bool))


@pytest.mark.parametrize("case", GETITEM)
def test_getitem_matches_paddle(real_paddle, gradcheck, case):
    fn = GETITEM[case]
    x = r(3, 4, 2)
    compare(real_paddle, lambda P, t: fn(t), x)
    gradcheck(fn, x)


def test_getitem_shape_rule_matches_the_result():
    x = ours.to_tensor(r(3, 4, 2))
    for index in [(1,), (slice(None, None, -2), None, Ellipsis), ([0, 2], slice(None), [1, 0]), (slice(1, None),)]:
        spec, tensors = subscript._encode("getitem", x, index)
        inferred = subscript.getitem_op.infer(
            Spec(tuple(x.shape), F32), *[Spec(tuple(t.shape), t.dtype) for t in tensors], spec=spec
        )
        assert list(inferred.shape) == x[index].shape


def test_getitem_shape_rule_keeps_symbols_and_marks_mask_counts():
    x = Spec(("N", 4, 2), F32)
    rule = subscript.getitem_op.infer
    assert rule(x, spec=(("slice", None, None, None), ("int", 1))).shape == ("N", 2)
    assert rule(x, spec=(("none",), ("ellipsis",), ("slice", None, None, -1))).shape == (1, "N", 4, 2)
    mask = Spec(("N", 4), np.dtype(bool))
    assert rule(x, mask, spec=(("tensor", 0),)).shape == (index_ops.NNZ, 2)


def test_iteration_stops_at_the_end():
    t = ours.to_tensor([[1, 2], [3, 4], [5, 6]])
    assert [row.tolist() for row in t] == [[1, 2], [3, 4], [5, 6]]


@pytest.mark.parametrize(
    "index, error",
    [
        ((0, 0, 0, 0), ShapeError),
        ((5,), IndexError),
        (([0, 7],), ShapeError),
        ((slice(0, 2, 0),), ShapeError),
        ((np.array([0.5]),), DTypeError),
    ],
)
def test_bad_getitem_raises_typed_errors(index, error):
    x = ours.to_tensor(r(3, 4, 2))
    with pytest.raises(error, match=r"getitem: .*(\[3, 4, 2\]|float64)"):
        x[index]


# ----- __setitem__ ---------------------------------------------------------------------------

SETITEM = {
    "int": ((1,), (4, 2)),
    "slice_broadcast_row": ((slice(None), 1), (2,)),
    "negative_step": ((slice(None, None, -2),), (2, 4, 2)),
    "ellipsis": ((Ellipsis, 0), (3, 1)),
    "int_list": (([2, 0],), (2, 4, 2)),
    "mixed": (([0, 2], slice(1, 3)), (2, 2, 2)),
    "scalar_value_shape": ((0, 0, 1), ()),
    "extra_leading_one": ((1, 2), (1, 2)),
}


@pytest.mark.parametrize("case", SETITEM)
def test_setitem_matches_paddle_and_finite_differences(real_paddle, gradcheck, case):
    index, value_shape = SETITEM[case]

    def fn(P, x, v):
        y = x * 1.0
        y[index] = v
        return y * 2.0

    x, v = r(3, 4, 2), r(*value_shape)
    compare(real_paddle, fn, x, v)
    gradcheck(lambda a, b: fn(ours, a, b), x, v)


def test_setitem_bool_mask_and_python_scalar(real_paddle):
    def fn(P, x):
        y = x * 1.0
        y[y > 0] = 0.5
        y[0] = 3
        return y

    compare(real_paddle, fn, r(3, 4))


def test_setitem_duplicate_indices_keep_the_last_write():
    x = ours.to_tensor(np.zeros(3, dtype=np.float32))
    v = ours.to_tensor(np.array([7.0, 8.0], dtype=np.float32), stop_gradient=False)
    x[ours.to_tensor([0, 0])] = v
    assert x.tolist() == [8.0, 0.0, 0.0]
    x.sum().backward()
    assert v.grad.tolist() == [0.0, 1.0]  # the overwritten write has no effect, so no gradient


def test_setitem_on_leaf_requiring_grad_raises_like_paddle():
    w = ours.to_tensor(r(3), stop_gradient=False)
    with pytest.raises(ValueError, match="leaf tensor that requires a gradient"):
        w[0] = 1.0
    with ours.no_grad():
        w[0] = 1.0
    assert w.numpy()[0] == 1.0 and not w.stop_gradient and w.is_leaf


def test_setitem_on_data_with_grad_value_makes_a_graph():
    x = ours.zeros([2, 3])
    v = ours.to_tensor(r(3), stop_gradient=False)
    x[1] = v
    assert not x.stop_gradient
    (x * x).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), 2 * v.numpy())


def test_setitem_value_shape_mismatch_raises_shape_error():
    x = ours.zeros([2, 3])
    with pytest.raises(ShapeError, match=r"setitem: value\[2\].*\[3\].*\[2, 3\]"):
        x[0] = ours.ones([2])


# ----- typed errors of the functional ops ----------------------------------------------------


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: ours.gather(x, ours.to_tensor([3])), ShapeError, r"gather: index 3 .*\[3, 4\]"),
        (lambda x: ours.gather(x, ours.to_tensor([[0, 1]])), ShapeError, r"gather: .*\[1, 2\]"),
        (lambda x: ours.gather(x, ours.to_tensor([0.5])), DTypeError, "gather: index must be an integer"),
        (lambda x: ours.gather(x, ours.to_tensor([0]), axis=2), ShapeError, "gather: axis 2"),
        (lambda x: ours.gather_nd(x, ours.to_tensor([[0, 0, 0]])), ShapeError, r"gather_nd: .*\[3, 4\]"),
        (lambda x: ours.gather_nd(x, ours.to_tensor([[0, 4]])), ShapeError, r"gather_nd: index 4 .*\[3, 4\]"),
        (lambda x: ours.scatter(x, ours.to_tensor([0]), ours.ones([1, 3])), ShapeError, r"scatter: .*\[1, 3\]"),
        (lambda x: ours.scatter(x, ours.to_tensor([-4]), ours.ones([1, 4])), ShapeError, r"scatter: index -4"),
        (
            lambda x: ours.scatter_nd_add(x, ours.to_tensor([[0]]), ours.ones([3])),
            ShapeError,
            r"scatter_nd_add: updates\[3\]",
        ),
        (lambda x: ours.masked_fill(x, ours.to_tensor([True, False]), 0.0), ShapeError, "masked_fill"),
        (lambda x: ours.masked_select(x, ours.to_tensor([1, 0, 1, 1])), DTypeError, "masked_select: mask"),
        (lambda x: ours.take_along_axis(x, ours.to_tensor([0]), 0), ShapeError, r"take_along_axis: .*\[3, 4\]"),
        (lambda x: ours.take_along_axis(x, ours.to_tensor([[5]]), 1), ShapeError, r"take_along_axis: index 5"),
        (lambda x: ours.put_along_axis(x, ours.to_tensor([[0]]), 1.0, 3), ShapeError, "put_along_axis: axis 3"),
        (lambda x: ours.topk(x, 5), ShapeError, r"topk: k=5 .*\[3, 4\]"),
        (lambda x: ours.sort(x, axis=2), ShapeError, "sort: axis 2"),
        (lambda x: ours.nn.functional.one_hot(ours.to_tensor([3]), 3), ShapeError, r"one_hot: labels .*\[0, 3\)"),
    ],
)
def test_bad_input_raises_typed_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(ours.to_tensor(r(3, 4)))


def test_setitem_after_use_keeps_earlier_consumers_on_the_old_value(real_paddle, gradcheck):
    """Ops recorded before the write still send their gradient to the value they read."""

    def fn(P, x):
        h = x * 1.0
        y = h * 2.0
        h[0] = 0.0
        z = h * 3.0
        h[1:] = h[1:].exp()
        return y + z + h

    compare(real_paddle, fn, r(3))
    gradcheck(single(fn), r(3))


@pytest.mark.parametrize("largest", [True, False])
def test_topk_with_ties_agrees_with_stable_argsort(largest):
    """The partition path (small k) picks and orders tied entries exactly as the full stable sort."""
    x = ours.to_tensor(np.random.default_rng(3).integers(0, 4, (6, 50)).astype("float32"))
    values, indices = ours.topk(x, 5, largest=largest)
    order = ours.argsort(x, descending=largest)[:, :5]
    assert indices.tolist() == order.tolist()
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x.numpy(), order.numpy(), 1))


def test_index_shape_rules_keep_symbolic_dims():
    x, ids = Spec(("N", 4), F32), Spec((3,), np.dtype(np.int64))
    assert index_ops.gather_op.infer(x, ids, axis=1).shape == ("N", 3)
    assert index_ops.gather_op.infer(x, Spec(("K",), np.dtype(np.int64)), axis=0).shape == ("K", 4)
    values, indices = sorting.topk_op.infer(x, k=2, axis=1, largest=True)
    assert values.shape == indices.shape == ("N", 2) and indices.dtype == np.int64
    along = index_ops.take_along_axis_op.infer(x, Spec(("N", 2), np.dtype(np.int64)), axis=1)
    assert along.shape == ("N", 2)
    assert index_ops.one_hot_op.infer(Spec(("N",), np.dtype(np.int64)), num_classes=5).shape == ("N", 5)
    assert index_ops.masked_select_op.infer(x, Spec(("N", 4), np.dtype(bool))).shape == (index_ops.NNZ,)
    assert index_ops.nonzero_op.infer(x).shape == (index_ops.NNZ, 2)
    assert index_ops.gather_nd_op.infer(Spec(("N", 4, 5), F32), Spec((7, 2), np.dtype(np.int64))).shape == (7, 5)
