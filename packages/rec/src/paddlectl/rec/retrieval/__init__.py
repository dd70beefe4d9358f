"""Two-tower (DSSM) retrieval on MovieLens-100k: data, model, in-batch softmax loss, metric, task."""
