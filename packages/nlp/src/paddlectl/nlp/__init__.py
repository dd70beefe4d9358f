"""NLP suite on paddlectl-framework."""

from importlib.metadata import version

__version__ = version("paddlectl-nlp")
