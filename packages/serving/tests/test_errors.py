from importlib.metadata import version

import paddlectl.serving
from paddlectl.serving.errors import ServeError


def test_version_comes_from_metadata():
    assert paddlectl.serving.__version__ == version("paddlectl-serving")


def test_serve_error_carries_status_code_and_headers():
    error = ServeError(429, "rate_limited", "key 'ci' is past 10/s; retry later", {"Retry-After": "1"})
    assert (error.status, error.code, error.headers) == (429, "rate_limited", {"Retry-After": "1"})
    assert error.body() == {"error": {"code": "rate_limited", "message": "key 'ci' is past 10/s; retry later"}}
    assert str(error) == error.message
