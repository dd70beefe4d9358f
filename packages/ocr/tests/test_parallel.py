"""``parallel.map_ordered``: input order, a chain per concurrent call, errors at their place."""

from __future__ import annotations

import threading
import time

import pytest

from paddlectl.ocr.parallel import map_ordered


class Chain:
    """Counts its concurrent users: a chain (its predictors' handles) must never serve two calls at once."""

    made = 0

    def __init__(self) -> None:
        Chain.made += 1
        self.busy = threading.Lock()

    def clone(self) -> Chain:
        return Chain()


def _work(chain: Chain, item: int) -> tuple[int, int]:
    assert chain.busy.acquire(blocking=False), "a chain served two calls at once"
    try:
        time.sleep(0.002 * (item % 3))  # later items finish first sometimes
        return item, threading.get_ident()
    finally:
        chain.busy.release()


def test_results_come_in_input_order_on_several_threads():
    Chain.made = 0
    out = list(map_ordered(Chain(), _work, range(40), workers=3))
    assert [item for item, _ in out] == list(range(40))
    assert Chain.made == 3 and len({thread for _, thread in out}) > 1


def test_one_worker_runs_in_the_callers_thread_without_clones():
    Chain.made = 0
    out = list(map_ordered(Chain(), _work, range(5), workers=1))
    assert {thread for _, thread in out} == {threading.get_ident()} and Chain.made == 1


def test_an_error_is_raised_at_its_place_and_the_rest_is_cancelled():
    started = []

    def fail_at_5(chain, item):
        started.append(item)
        if item == 5:
            raise ValueError("bad image 5")
        return item

    seen = []
    with pytest.raises(ValueError, match="bad image 5"):
        for value in map_ordered(Chain(), fail_at_5, range(1000), workers=2):
            seen.append(value)
    assert seen == [0, 1, 2, 3, 4] and len(started) < 50
