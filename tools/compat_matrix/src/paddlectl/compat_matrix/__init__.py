"""Compatibility-matrix resolver: will this upgrade work here?"""

from importlib.metadata import version

__version__ = version("paddlectl-compat-matrix")
