from importlib.metadata import version

import paddlectl.license_audit


def test_version_comes_from_metadata():
    assert paddlectl.license_audit.__version__ == version("paddlectl-license-audit")
