"""Complex tensors against real Paddle 3.3.1: making them (to_tensor, paddle.complex, as_complex, x * 1j),
taking them apart (real, imag, angle, abs, as_real), conj, the arithmetic the API examples use, and
gradients in Paddle's convention for complex inputs (``dL/dRe + i dL/dIm``); printing as Paddle prints."""

from __future__ import annotations

import numpy as np
import pytest
from _complex_parity import compare, complex_array

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError

RNG = np.random.default_rng(1)
Z = complex_array(RNG, (3, 4))
W = complex_array(RNG, (3, 4))
CASES = {
    "real": (lambda L, z: L.real(z), Z),
    "imag": (lambda L, z: L.imag(z), Z),
    "conj": (lambda L, z: L.conj(z), Z),
    "angle": (lambda L, z: L.angle(z), Z),
    "abs": (lambda L, z: L.abs(z), Z),
    "as_real": (lambda L, z: L.as_real(z), Z),
    "polar": (lambda L, r, t: L.polar(r, t), RNG.uniform(0.5, 2, (3, 4)), RNG.uniform(-3, 3, (3, 4))),
    "as_complex": (lambda L, x: L.as_complex(x), RNG.uniform(-1, 1, (3, 2))),
    "complex": (lambda L, x, y: L.complex(x, y), RNG.uniform(-1, 1, (3, 4)), RNG.uniform(-1, 1, (4,))),
    "add": (lambda L, z, w: z + w, Z, W),
    "subtract": (lambda L, z, w: z - w, Z, W),
    "multiply": (lambda L, z, w: z * w, Z, W),
    "divide": (lambda L, z, w: z / w, Z, W),
    "matmul": (lambda L, z, w: L.matmul(z, w, transpose_y=True), Z, W),
    "exp": (lambda L, z: L.exp(z), Z),
    "pow_sqrt_square": (lambda L, z: z**3 + L.sqrt(z) * L.square(z), Z),
    "sum": (lambda L, z: L.sum(z, axis=1), Z),
    "mean": (lambda L, z: L.mean(z), Z),
    "times_1j": (lambda L, x: x * 1j + x, RNG.uniform(-1, 1, (4,))),
    "methods": (lambda L, z: z.conj().real() + z.imag() * z.angle(), Z),
    "inv": (lambda L, z: L.linalg.inv(z), Z[:3, :3] + 2 * np.eye(3)),
    "det": (lambda L, z: L.linalg.det(z), Z[:3, :3] + 2 * np.eye(3)),
    "norm": (lambda L, z: L.linalg.norm(z), Z),
    "einsum": (lambda L, z, w: L.einsum("ij,kj->ik", z, w), Z, W),
    "cumprod_prod": (lambda L, z: L.cumprod(z, 1) + L.prod(z, 1, keepdim=True), Z),
    "complex64": (lambda L, z, w: L.abs(z * w), Z.astype("complex64"), W.astype("complex64")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_gradients_match_paddle(real_paddle, case):
    fn, *arrays = CASES[case]
    compare(real_paddle, fn, *arrays, atol=1e-5)


@pytest.mark.parametrize(
    "value", [[1, -1j, -1], [[3.0 + 3.0j, 2.0 + 2.0j], [2.0 - 2.0j, -0.5 + 0.0j]], 1 + 2j, np.array([1j, 2.0])]
)
def test_to_tensor_dtype_and_printing_match_paddle(real_paddle, value):
    theirs, mine = real_paddle.to_tensor(value), ours.to_tensor(value)
    assert str(theirs.dtype) == f"paddle.{mine.dtype.name}"
    assert repr(mine).split(",", 2)[2:] == str(theirs).split(",", 2)[2:]  # after shape: dtype, place, values


def test_is_complex_and_the_complex_dtypes():
    z = ours.to_tensor(Z)
    assert ours.is_complex(z) and not ours.is_complex(ours.real(z))
    assert z.dtype == ours.complex128 and ours.to_tensor(Z.astype("complex64")).dtype == ours.complex64
    assert ours.real(z).dtype == ours.float64 and z.astype("complex64").dtype == ours.complex64


def test_bad_inputs_are_typed_errors():
    x = ours.to_tensor(RNG.uniform(-1, 1, (3, 4)).astype("float32"))
    with pytest.raises(DTypeError, match="complex64 or complex128"):
        ours.as_real(x)
    with pytest.raises(ShapeError, match="size 2"):
        ours.as_complex(x)
    with pytest.raises(DTypeError, match="share a dtype"):
        ours.complex(x, x.astype("float64"))
    with pytest.raises(DTypeError, match="float32 or float64"):
        ours.complex(ours.to_tensor([1]), ours.to_tensor([2]))


def test_eig_matches_paddle(real_paddle):
    a = np.array([[2.0, 1, 0], [0.5, 3, 1], [0, 0.2, 5]])
    compare(real_paddle, lambda L, x: L.linalg.eig(x)[0], a)
    compare(real_paddle, lambda L, x: L.linalg.eig(x)[1], a)
    compare(real_paddle, lambda L, x: L.linalg.eigvals(x), a.astype("float32"), atol=1e-5, grads=False)
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])  # complex eigenvalues +-i
    compare(real_paddle, lambda L, x: L.linalg.eigvals(x), rotation, grads=False)


def test_eigh_of_hermitian_input_has_real_eigenvalues_and_paddles_gradient(real_paddle):
    h = Z[:3, :3] + Z[:3, :3].conj().T
    w, _ = ours.linalg.eigh(ours.to_tensor(h.astype("complex64")))
    theirs = real_paddle.linalg.eigvalsh(real_paddle.to_tensor(h.astype("complex64")))
    assert w.dtype == ours.float32 and str(theirs.dtype) == "paddle.float32"
    np.testing.assert_allclose(w.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    assert ours.linalg.eigvalsh(ours.to_tensor(h)).dtype == ours.float64
    compare(real_paddle, lambda L, x: L.linalg.eigh(x)[0], h)
    compare(real_paddle, lambda L, x: L.abs(L.linalg.eigh(x)[1]), h)  # |V|: free of each vector's phase


@pytest.mark.parametrize(
    "call",
    [
        lambda z: ours.maximum(z, z),
        lambda z: ours.max(z),
        lambda z: ours.argmin(z),
        lambda z: ours.sort(z),
        lambda z: ours.argsort(z),
        lambda z: ours.topk(z, 1),
        lambda z: ours.clip(z, 0.0, 1.0),
        lambda z: ours.floor(z),
        lambda z: ours.nn.functional.relu(z),
        lambda z: ours.nn.functional.softmax(z),
    ],
)
def test_ops_without_complex_kernels_refuse_complex_input_by_type(call):
    # Paddle 3.3.1 has no complex kernel for these either (its error is a kernel-not-found RuntimeError)
    with pytest.raises(DTypeError, match="complex64|floating-point"):
        call(ours.to_tensor(Z.astype("complex64")))
