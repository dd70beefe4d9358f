from importlib.metadata import version

import paddlectl.nlp


def test_version_comes_from_metadata():
    assert paddlectl.nlp.__version__ == version("paddlectl-nlp")
