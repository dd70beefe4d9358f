from importlib.metadata import version

import paddlectl.detection


def test_version_comes_from_metadata():
    assert paddlectl.detection.__version__ == version("paddlectl-detection")
