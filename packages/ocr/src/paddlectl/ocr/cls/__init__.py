"""``ocr.cls``: the 0/180 text-line direction classifier (PaddleOCR's ``cls`` model_type)."""
