from importlib.metadata import version

import paddlectl.cli


def test_version_comes_from_metadata():
    assert paddlectl.cli.__version__ == version("paddlectl")
