"""License auditor for code, model weights and datasets."""

from importlib.metadata import version

__version__ = version("paddlectl-license-audit")
