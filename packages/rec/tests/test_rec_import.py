from importlib.metadata import version

import paddlectl.rec


def test_version_comes_from_metadata():
    assert paddlectl.rec.__version__ == version("paddlectl-rec")
