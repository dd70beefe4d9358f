"""``nlp.causal_lm``: the GPT-style character model's task, its data, vocabulary, metric and serving."""
