from importlib.metadata import version

import paddlectl.eval_harness


def test_version_comes_from_metadata():
    assert paddlectl.eval_harness.__version__ == version("paddlectl-eval-harness")
