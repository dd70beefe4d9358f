"""Detection data: COCO and VOC readers, PaddleDetection's reader transforms, the label table."""
