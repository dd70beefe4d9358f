"""Shared test tools: finite-difference gradient checks and the PaddlePaddle / PyTorch oracles."""

from __future__ import annotations

import importlib
import importlib.util
import os

# Kernels compile where they are called, as they always did: a test's numbers must not depend on
# whether the kernel cache was warm (test_background_compile.py switches it on where it tests it).
os.environ.setdefault("PADDLECTL_BACKGROUND_COMPILE", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import paddlectl.framework as ours  # noqa: E402


def _oracle(module: str, requirement: str):
    """The oracle module; skip when it is not installed, fail loudly when it is installed but broken
    (a broken oracle must not silently turn hundreds of comparisons into skips)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"oracle {requirement} is not installed; `pip install {requirement}` to compare against it")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(f"oracle {requirement} is installed but does not import ({exc}); fix its environment")


@pytest.fixture(scope="session")
def real_paddle():
    """The real PaddlePaddle, as the reference our numbers must match."""
    paddle = _oracle("paddle", "paddlepaddle==3.3.1")
    paddle.set_device("cpu")
    return paddle


@pytest.fixture(scope="session")
def torch():
    return _oracle("torch", "torch==2.13.0")


@pytest.fixture(autouse=True)
def _no_contention_back_off(monkeypatch):
    """Predictor runs as on an idle machine: under back-off a busy CI machine would change a run's
    thread count between two runs a test compares bit for bit (test_threads tests the back-off)."""
    from paddlectl.framework.inference import threads
    from paddlectl.framework.kernels.cores import physical_cores

    monkeypatch.setattr(threads, "free_cores", physical_cores)


def pytest_configure(config):
    config.addinivalue_line("markers", "torch_oracle: compares with PyTorch (the `torch` fixture); nox -s torch_oracle")


def pytest_collection_modifyitems(items):
    """Every test that asks for the `torch` oracle is marked, so `nox -s torch_oracle` selects exactly those."""
    for item in items:
        if "torch" in getattr(item, "fixturenames", ()):
            item.add_marker("torch_oracle")


def numeric_grads(fn, arrays: list[np.ndarray], cotangent: np.ndarray, eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of ``sum(fn(*arrays) * cotangent)`` with respect to every array (float64)."""
    grads = []
    for k, base in enumerate(arrays):
        grad = np.zeros_like(base)
        flat = grad.reshape(-1)
        for i in range(base.size):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[k].reshape(-1)[i] += eps
            minus[k].reshape(-1)[i] -= eps
            f_plus = np.sum(np.asarray(fn(*plus)) * cotangent)
            f_minus = np.sum(np.asarray(fn(*minus)) * cotangent)
            flat[i] = (f_plus - f_minus) / (2 * eps)
        grads.append(grad)
    return grads


def check_grad(fn, *arrays: np.ndarray, rtol: float = 1e-5, atol: float = 1e-7, seed: int = 0) -> None:
    """Compare the tape's gradients of ``fn`` (tensors in, tensor out) with finite differences, in float64."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(seed)

    def forward_np(*xs):
        with ours.no_grad():
            return fn(*[ours.to_tensor(x, dtype="float64") for x in xs]).numpy()

    out = forward_np(*arrays)
    cotangent = rng.standard_normal(np.shape(out))
    tensors = [ours.to_tensor(a, dtype="float64", stop_gradient=False) for a in arrays]
    result = fn(*tensors)
    result.backward(ours.to_tensor(cotangent, dtype="float64"))
    expected = numeric_grads(forward_np, arrays, cotangent)
    for i, (t, e) in enumerate(zip(tensors, expected, strict=True)):
        got = np.zeros_like(e) if t.grad is None else t.grad.numpy()
        np.testing.assert_allclose(got, e, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


@pytest.fixture
def gradcheck():
    return check_grad
