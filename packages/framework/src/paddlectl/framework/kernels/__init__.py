"""Numba kernels: pure functions over arrays, compiled once and cached on disk (``cache=True``)."""
