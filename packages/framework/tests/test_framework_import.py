from importlib.metadata import version

import paddlectl.framework


def test_version_comes_from_metadata():
    assert paddlectl.framework.__version__ == version("paddlectl-framework")
