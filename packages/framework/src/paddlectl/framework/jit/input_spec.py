"""InputSpec lives in ``static.input_spec`` (Paddle's ``paddle.static.InputSpec``); this name stays
until testing/op_checks.py and the tests that import it from here import it from there."""

from ..static.input_spec import InputSpec, signatures  # noqa: F401
