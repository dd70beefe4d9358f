"""Op families. Importing this package declares every op and attaches the Tensor methods."""

from . import (
    bitwise,  # noqa: F401 - ops with no Tensor method yet (ONNX import uses them)
    methods,  # noqa: F401 - installs operators and methods on Tensor
)
