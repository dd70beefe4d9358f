"""Synthetic OCR data: text lines (recognition) and pages of lines (detection) rendered with several
fonts, sizes, colours, rotations, perspective, blur, noise and backgrounds, in PaddleOCR's label formats.

``scene.render_line`` / ``scene.render_page`` draw one sample; ``dataset.generate`` writes a set;
``command.synth_command`` is ``paddlectl ocr synth``. Kept free of imports so the command's options load
fast."""
