"""``rec.ctr``: click-through-rate ranking models (Wide&Deep, DeepFM, DCN) and their task."""
