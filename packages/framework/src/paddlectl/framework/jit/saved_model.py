"""The saved-model format under its first name: it lives in ``static.saved_model`` (static mode's
``save_inference_model`` writes it too, and ``static`` sits below ``jit``)."""

from ..static.saved_model import (  # noqa: F401 - re-exported for the importers of this name
    FORMAT,
    FORMAT_VERSION,
    MODEL_JSON,
    ONNX_METADATA_ENTRIES,
    READABLE_VERSIONS,
    WEIGHTS,
    SavedModel,
    onnx_metadata_entries,
    producer_version,
    read_model_dir,
    write_model_dir,
)
