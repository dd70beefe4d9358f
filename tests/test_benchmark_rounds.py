"""benchmarks/_rounds.py: the middle round, every round's figure, and the per-round ratio range the
benchmark tables print."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from _rounds import middle, ms_text, ratio_text  # noqa: E402


def test_middle_keeps_every_round_in_run_order_and_the_first_runs_cold_keys():
    runs = [{"median_ms": 30.0, "load_s": 9.0}, {"error": "boom"}, {"median_ms": 10.0, "load_s": 1.0},
            {"median_ms": 20.0, "load_s": 1.5}]  # fmt: skip
    r = middle(runs, first=("load_s",))
    assert r["median_ms"] == 20.0 and r["load_s"] == 9.0
    assert r["rounds_ms"] == [30.0, None, 10.0, 20.0]
    assert ms_text(r) == "20.0 (10.0-30.0)"


def test_ratio_range_pairs_the_rounds_and_skips_failed_ones():
    ours = middle([{"median_ms": 12.0}, {"median_ms": 9.0}, {"error": "x"}])
    theirs = middle([{"median_ms": 10.0}, {"median_ms": 10.0}, {"median_ms": 5.0}])
    assert ratio_text(ours, theirs) == "1.20x (0.90-1.20)"  # middles 12/10; rounds 1.2 and 0.9


def test_a_single_round_prints_no_range():
    r = middle([{"median_ms": 4.0}])
    assert ms_text(r, 2) == "4.00" and ratio_text(r, r) == "1.00x"
    assert middle([{"error": "all failed"}]) == {"error": "all failed"}
