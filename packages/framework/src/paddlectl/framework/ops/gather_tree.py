"""``paddle.nn.functional.gather_tree``: full beam-search sequences from each step's chosen ids and
parent beams, walked back from the last step (T gathers along the beam axis; integers, no gradient)."""

from __future__ import annotations

from ..errors import ShapeError
from .loss_checks import check_int


def gather_tree(ids, parents):
    from .index import take_along_axis
    from .shape import stack

    check_int("gather_tree", "ids", ids, "cast it with .astype('int64')")
    check_int("gather_tree", "parents", parents, "cast it with .astype('int64')")
    if ids.ndim != 3 or parents.shape != ids.shape:
        raise ShapeError(
            f"gather_tree: ids and parents must both be [max_time, batch, beam], got ids{ids.shape}, "
            f"parents{parents.shape}"
        )
    steps = ids.shape[0]
    if steps == 0:
        return ids
    beam = parents[steps - 1]
    out = [ids[steps - 1]]
    for t in range(steps - 2, -1, -1):
        out.append(take_along_axis(ids[t], beam, 1))
        beam = take_along_axis(parents[t], beam, 1)
    return stack(out[::-1], 0)


FUNCTIONAL = ["gather_tree"]
