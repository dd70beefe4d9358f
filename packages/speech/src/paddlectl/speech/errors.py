"""The speech suite's typed errors: each names the file (and line) at fault and the fix.

They subclass the framework's, so the CLI's one-line, exit-2 handling of ``PaddlectlError`` covers them.
"""

from paddlectl.framework.errors import ConfigError, DataError


class ManifestError(DataError):
    """A manifest line is malformed or names audio that is missing (the message gives the line number)."""


class VocabularyError(ConfigError):
    """A vocabulary file is malformed, or does not fit the text or the model it is used with."""


class SynthError(DataError):
    """The synthetic corpus cannot be built (espeak-ng missing or failing, a bad output directory)."""


class CorpusNotInstalledError(DataError):
    """A corpus of real recordings is not installed; the message says what to install."""
