"""CTC loss: finite differences, real PaddlePaddle (warp-ctc) and PyTorch (on log_softmax of the logits)."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError

F = ours.nn.functional
rng = np.random.default_rng(1)

T, B, C = 7, 3, 5
LOGITS = rng.standard_normal((T, B, C)).astype("float32")
LABELS = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]], dtype="int32")  # repeats need a blank between them
IN_LEN = np.array([7, 5, 7], dtype="int64")
LAB_LEN = np.array([3, 2, 1], dtype="int64")


def _ours(logits, labels=LABELS, in_len=IN_LEN, lab_len=LAB_LEN, **kw):
    return F.ctc_loss(logits, ours.to_tensor(labels), ours.to_tensor(in_len), ours.to_tensor(lab_len), **kw)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("norm_by_times", [False, True])
def test_ctc_matches_paddle(real_paddle, reduction, norm_by_times):
    tp = real_paddle.to_tensor(LOGITS, stop_gradient=False)
    expected = real_paddle.nn.functional.ctc_loss(
        tp, real_paddle.to_tensor(LABELS), real_paddle.to_tensor(IN_LEN), real_paddle.to_tensor(LAB_LEN),
        reduction=reduction, norm_by_times=norm_by_times,
    )  # fmt: skip
    to = ours.to_tensor(LOGITS, stop_gradient=False)
    got = _ours(to, reduction=reduction, norm_by_times=norm_by_times)
    assert got.shape == list(expected.shape) and got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)
    expected.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(to.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_ctc_layer_and_blank_matches_paddle(real_paddle):
    labels = np.array([[0, 1, 2], [3, 1, 0], [2, 2, 2]], dtype="int32")  # blank is the last class here
    tp = real_paddle.to_tensor(LOGITS, stop_gradient=False)
    expected = real_paddle.nn.CTCLoss(blank=4)(
        tp, real_paddle.to_tensor(labels), real_paddle.to_tensor(IN_LEN), real_paddle.to_tensor(LAB_LEN)
    )
    to = ours.to_tensor(LOGITS, stop_gradient=False)
    got = ours.nn.CTCLoss(blank=4)(to, ours.to_tensor(labels), ours.to_tensor(IN_LEN), ours.to_tensor(LAB_LEN))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)
    expected.backward()
    got.backward()
    np.testing.assert_allclose(to.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_ctc_matches_torch(torch):
    tl = torch.tensor(LOGITS, requires_grad=True)
    expected = torch.nn.functional.ctc_loss(
        tl.log_softmax(2), torch.tensor(LABELS).long(), torch.tensor(IN_LEN), torch.tensor(LAB_LEN), reduction="sum"
    )
    expected.backward()
    to = ours.to_tensor(LOGITS, stop_gradient=False)
    got = _ours(to, reduction="sum")
    got.backward()
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(to.grad.numpy(), tl.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_ctc_gradcheck(gradcheck):
    small = rng.standard_normal((4, 2, 3))
    labels, in_len, lab_len = np.array([[1, 2], [2, 2]]), np.array([4, 4]), np.array([2, 1])
    gradcheck(lambda x: _ours(x, labels, in_len, lab_len, reduction="none"), small)
    gradcheck(lambda x: _ours(x, labels, in_len, lab_len, reduction="mean"), small)


def test_ctc_infeasible_and_empty():
    # Two equal labels need 3 frames; with 2 the loss is infinite, and zero_infinity turns it to 0.
    logits = ours.to_tensor(rng.standard_normal((2, 1, 3)).astype("float32"), stop_gradient=False)
    args = (np.array([[1, 1]]), np.array([2]), np.array([2]))
    assert np.isinf(_ours(logits, *args, reduction="none").numpy()).all()
    loss = _ours(logits, *args, reduction="sum", zero_infinity=True)
    loss.backward()
    assert loss.item() == 0.0 and not logits.grad.numpy().any()
    # An empty label: the loss is -sum_t log p(blank).
    x = rng.standard_normal((3, 1, 3))
    logp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    got = _ours(ours.to_tensor(x), np.zeros((1, 1), np.int64), np.array([3]), np.array([0]), reduction="sum")
    np.testing.assert_allclose(got.numpy(), -logp[:, 0, 0].sum(), rtol=1e-12)


def test_ctc_bad_inputs():
    x = ours.to_tensor(LOGITS)
    with pytest.raises(ShapeError, match="log_probs"):
        _ours(ours.to_tensor(LOGITS[0]))
    with pytest.raises(ShapeError, match="labels"):
        _ours(x, LABELS[:2])
    with pytest.raises(DTypeError, match="labels"):
        _ours(x, LABELS.astype("float32"))
    with pytest.raises(ValueError, match="input_lengths"):
        _ours(x, in_len=np.array([8, 5, 7]))
    with pytest.raises(ValueError, match="blank"):
        _ours(x, np.array([[0, 2, 2], [3, 1, 0], [4, 4, 4]], dtype="int32"))
