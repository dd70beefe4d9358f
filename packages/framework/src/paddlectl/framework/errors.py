"""Typed errors: each says what was expected, what was found, and how to fix it.

They subclass the built-in exception a Python user would catch for the same
problem (ValueError for shapes and config, TypeError for dtypes), so code
written against PaddlePaddle's ValueError/TypeError keeps working.
"""


class PaddlectlError(Exception):
    """Base of every error paddlectl raises on purpose."""


class ConfigError(PaddlectlError, ValueError):
    """A configuration file or override is missing, malformed or names an unknown key."""


class ShapeError(PaddlectlError, ValueError):
    """An op received a tensor whose shape it cannot accept."""


class DTypeError(PaddlectlError, TypeError):
    """An op received a tensor whose dtype it cannot accept."""


class ConversionError(PaddlectlError, RuntimeError):
    """Dynamic-to-static conversion met a construct it cannot trace."""


class CheckpointError(PaddlectlError, RuntimeError):
    """A checkpoint or model file is missing, truncated, tampered with or of an unknown format."""


class DataError(PaddlectlError, ValueError):
    """An input the user pointed at (image, dataset directory, exported model) is missing or unreadable."""


class OnnxImportError(ConversionError):
    """An ONNX file is unreadable, fails ``onnx.checker``, is outside the supported IR/opset range, or
    holds a node, attribute or initializer the importer cannot convert; the message names which."""


class ResourceError(PaddlectlError, MemoryError):
    """A run needs more memory than the machine gives (inputs too large for the model, or a model that
    declares huge intermediate values); the message says which inputs."""


class LayoutError(PaddlectlError, TypeError):
    """A sparse (COO/CSR) tensor reached an op that reads dense arrays only, or a sparse op received a
    layout it does not take; the message names the conversion (``to_dense``, ``to_sparse_coo``)."""
