"""Typed errors: each names what was wrong and how to fix it.

The CLI maps them to exit codes without catching unrelated bugs: ``UsageError`` (and the
framework's ``ConfigError``) is exit 2, ``TrackingUnavailable`` keeps the run locally for
``paddlectl eval sync``.
"""


class EvalHarnessError(Exception):
    """Base of every error the evaluation harness raises on purpose."""


class UsageError(EvalHarnessError, ValueError):
    """An argument, path, config value or run id given by the user is missing or malformed."""


class ModelLoadError(UsageError):
    """The exported model cannot be opened by the framework's predictor."""


class TrackingUnavailable(EvalHarnessError, ConnectionError):
    """The MLflow tracking store cannot be reached; results stay local until ``paddlectl eval sync``."""
