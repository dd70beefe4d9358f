"""Typed errors: each names what was wrong and how to fix it.

They subclass the built-in exception a caller would catch for the same problem, so the CLI can
turn any of them into a one-line message and exit code 2 without catching unrelated bugs.
"""


class LicenseAuditError(Exception):
    """Base of every error the licence auditor raises on purpose."""


class InputError(LicenseAuditError, ValueError):
    """An argument, path or file given by the user is missing or malformed."""


class ManifestError(InputError):
    """An asset.yaml manifest does not follow the schema, or its files do not match their sha256."""


class PolicyError(InputError):
    """A policy file is missing, malformed, or names an unknown licence, obligation or action."""


class KnowledgeBaseError(LicenseAuditError, RuntimeError):
    """The curated licence data shipped with the package is inconsistent (a packaging bug)."""
