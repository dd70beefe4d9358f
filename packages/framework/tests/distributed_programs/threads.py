"""The thread counts a rank runs with (numba's pool, and the variables OpenMP and OpenBLAS read);
prints 'RESULT <json>' on rank 0."""

import json
import os

import numba

import paddlectl.framework.distributed as dist

if dist.get_rank() == 0:
    found = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print("RESULT " + json.dumps({"numba": numba.config.NUMBA_NUM_THREADS, **found}), flush=True)
