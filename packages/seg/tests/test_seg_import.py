from importlib.metadata import version

import paddlectl.seg


def test_version_comes_from_metadata():
    assert paddlectl.seg.__version__ == version("paddlectl-seg")
