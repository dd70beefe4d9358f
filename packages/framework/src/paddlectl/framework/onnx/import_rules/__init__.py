"""ONNX import rules by op family, merged into ``converters.RULES`` (which keeps the conv, pooling,
resize and layout rules the PP-OCR models need). Each family module maps ONNX op types onto
framework ops; ``base`` holds the ``Rule`` record and the helpers they share."""

from . import detection, dft, elementwise, grid_sample, nn, quant, recurrent, reductions, roi_align, tensors

FAMILY_RULES = {
    **elementwise.RULES,
    **reductions.RULES,
    **nn.RULES,
    **tensors.RULES,
    **quant.RULES,
    **detection.RULES,
    **recurrent.RULES,
    **grid_sample.RULES,
    **dft.RULES,
    **roi_align.RULES,
}
