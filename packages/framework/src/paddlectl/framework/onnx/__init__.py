"""ONNX import and export, side by side.

Export (``export.py``): a Program becomes ONNX nodes through the emitter in each op's record
(``emitters.py`` fills ``REGISTRY[name].onnx_export``); ``jit.save(format="onnx")`` and
``paddlectl export --format onnx`` call it. Import (``importer.py``): an ``.onnx`` file is validated
(``validate.py``), then each node is mapped by the rule for its ONNX op type (``converters.py``; the
rules describe ONNX's ops, so they are keyed by ONNX type) onto our ops through ``builder.py``;
``inference.Config("model.onnx")`` and ``paddlectl predict`` call it.

Only the emitters load with the framework (they need no ``onnx`` package); the rest imports ``onnx``
(an optional extra) when first used.
"""

from . import (  # noqa: F401 - fill each op record's onnx_export
    emitters,
    fft_emitters,
    index_emitters,
    integer_emitters,
    more_emitters,
    norm_emitters,
    rnn_emitter,
    roi_emitter,
)
