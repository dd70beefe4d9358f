"""``ocr.det``: the trainable DB text detector (MobileNetV3 + DBFPN + DBHead, DBLoss, label maps)."""
