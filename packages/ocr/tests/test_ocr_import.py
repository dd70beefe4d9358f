from importlib.metadata import version

import paddlectl.ocr


def test_version_comes_from_metadata():
    assert paddlectl.ocr.__version__ == version("paddlectl-ocr")
