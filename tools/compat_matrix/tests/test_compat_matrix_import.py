from importlib.metadata import version

import paddlectl.compat_matrix


def test_version_comes_from_metadata():
    assert paddlectl.compat_matrix.__version__ == version("paddlectl-compat-matrix")
