from importlib.metadata import version

import paddlectl.speech


def test_version_comes_from_metadata():
    assert paddlectl.speech.__version__ == version("paddlectl-speech")
