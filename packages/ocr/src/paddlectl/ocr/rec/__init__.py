"""``ocr.rec``: trainable CTC text-line recognisers (CRNN, SVTR) in PaddleOCR's config layout."""
