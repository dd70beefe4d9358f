"""OCR suite (text detection, direction classification, recognition) on paddlectl-framework."""

from importlib.metadata import version

__version__ = version("paddlectl-ocr")
