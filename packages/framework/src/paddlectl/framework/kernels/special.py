"""Special functions NumPy lacks, as Numba ufuncs (compiled per dtype, cached on disk)."""

import math

from numba import vectorize


@vectorize(["float32(float32)", "float64(float64)"], cache=True)
def erf(x):
    return math.erf(x)
