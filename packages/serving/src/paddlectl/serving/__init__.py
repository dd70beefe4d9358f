"""`paddlectl serve`: exported paddlectl models behind the Open Inference Protocol (KServe v2)."""

from importlib.metadata import version

__version__ = version("paddlectl-serving")


def __getattr__(name: str):
    """``paddlectl.serving.Client`` without importing httpx until it is used."""
    if name == "Client":
        from .client import Client

        return Client
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
