"""What one rank of a data-parallel ``paddlectl train --nproc N`` run does differently.

The trainer draws the same global batches on every rank (one seed, one generator); each rank
trains on its rows of each batch (``batch[rank::world]``) through ``DataParallel``, so N ranks take
the single-process run's steps. The logged loss is the mean over ranks. Rank 0 alone writes the run
(checkpoints, metrics, curve); the other ranks write into a private temporary directory removed at
the end, so the trainer's code paths stay the same on every rank.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..io.world import env_rank, env_world_size
from .collective import ReduceOp, all_reduce
from .data_parallel import DataParallel


class RankShare:
    def __init__(self) -> None:
        self.rank, self.world = env_rank(), env_world_size()

    def output_dir(self, path: Path) -> Path:
        return path if self.rank == 0 else Path(tempfile.mkdtemp(prefix=f"paddlectl-rank{self.rank}-"))

    def wrap(self, model):
        return DataParallel(model) if self.world > 1 else model

    def batches(self, batches: list[list[int]]) -> list[list[int]]:
        """This rank's rows of each batch; a last batch smaller than the world is skipped by all."""
        if self.world == 1:
            return batches
        return [b[self.rank :: self.world] for b in batches if len(b) >= self.world]

    def mean(self, loss):
        if self.world > 1:
            all_reduce(loss, ReduceOp.AVG)
        return loss

    def finish(self, output_dir: Path) -> None:
        if self.rank != 0:
            shutil.rmtree(output_dir, ignore_errors=True)
