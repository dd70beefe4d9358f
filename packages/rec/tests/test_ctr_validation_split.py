"""``split: {validation: true}``: the evaluation rows are a hold-out of the training part made by the
same rule, and the test rows are in neither part (settings are chosen without reading them)."""

import numpy as np
import pytest

from paddlectl.rec.ctr.sources import _split
from paddlectl.rec.table import Table


def _ratings(users=5, per_user=4):
    user = np.repeat(np.arange(users), per_user)
    time = np.tile(np.arange(per_user), users) * 10 + user
    return Table({"user_id": user, "timestamp": time, "row": np.arange(users * per_user)})


@pytest.mark.parametrize("split", [{"name": "leave_last_out", "n": 1}, {"name": "random", "seed": 3}])
def test_validation_holds_out_from_the_training_part(split):
    table = _ratings()
    train, test = _split(table, split)
    fit, validation = _split(table, {**split, "validation": True})
    assert sorted([*fit["row"], *validation["row"]]) == sorted(train["row"])
    assert not set(test["row"]) & ({*fit["row"]} | {*validation["row"]})


def test_leave_last_out_validation_is_each_users_rating_before_the_test_one():
    _, validation = _split(_ratings(), {"name": "leave_last_out", "n": 1, "validation": True})
    assert sorted(validation["timestamp"] // 10) == [2] * 5  # times 0..3: 3 is the test rating
