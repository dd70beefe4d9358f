"""Several programs of this directory in one job (each rank imports the framework once):
argv: PROGRAM [ARGS...] [+ PROGRAM [ARGS...]]...; rank 0 prints 'BEGIN PROGRAM' before each."""

import runpy
import sys
from pathlib import Path

import paddlectl.framework.distributed as dist

here = Path(__file__).parent
argv, jobs = sys.argv[1:], []
while argv:
    end = argv.index("+") if "+" in argv else len(argv)
    jobs.append(argv[:end])
    argv = argv[end + 1 :]
dist.init_parallel_env()
for program, *args in jobs:
    if dist.get_rank() == 0:
        print(f"BEGIN {program}", flush=True)
    sys.argv = [str(here / program), *args]
    runpy.run_path(str(here / program), run_name="__main__")
    dist.barrier()
