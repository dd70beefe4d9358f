"""Exports shared by the server tests (one LeNet per weight seed, per session)."""

from __future__ import annotations

import pytest
from servers import export_causal_lm, export_lenet


@pytest.fixture(scope="session")
def lenet(tmp_path_factory):
    return export_lenet(tmp_path_factory.mktemp("v1") / "lenet", seed=0)


@pytest.fixture(scope="session")
def lenet_v2(tmp_path_factory):
    return export_lenet(tmp_path_factory.mktemp("v2") / "lenet", seed=1)


@pytest.fixture(scope="session")
def causal_lm(tmp_path_factory):
    return export_causal_lm(tmp_path_factory.mktemp("lm"))
