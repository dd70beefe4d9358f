"""Typed errors of the server: each maps to one HTTP status and a stable machine-readable code.

Clients branch on ``code`` (``"rate_limited"``, ``"queue_full"``...), never on the
message, so codes never change once released; the message says what to fix.
"""

from __future__ import annotations

from paddlectl.framework.errors import ConfigError, PaddlectlError


class ServeError(PaddlectlError):
    """A request the server answers with ``status`` and ``{"error": {"code", "message"}}``.

    ``headers`` carries what the status needs beside the body (``Retry-After`` on 429/503).
    """

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = int(status)
        self.code = code
        self.message = message
        self.headers = dict(headers or {})

    def body(self) -> dict:
        """The JSON body every error response carries."""
        return {"error": {"code": self.code, "message": self.message}}


class ServeConfigError(ConfigError):
    """``--model``, ``--config`` (serve.yml) or a keys file is malformed; the message names the field."""
