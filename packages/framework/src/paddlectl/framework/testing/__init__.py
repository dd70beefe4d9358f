"""Tools for testing code built on the framework: the op conformance checks (``op_checks``)."""

from .op_checks import CHECKS, check_op, default_samples, exemptions, skip_reason

__all__ = ["CHECKS", "check_op", "default_samples", "exemptions", "skip_reason"]
