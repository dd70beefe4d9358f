"""Op families. Importing this package declares every op and attaches the Tensor methods."""

from . import methods  # noqa: F401 - installs operators and methods on Tensor
