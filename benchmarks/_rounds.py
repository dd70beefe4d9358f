"""Shared by the benchmark scripts: each framework runs several times, interleaved with its peers,
and the run with the middle latency is reported, with the spread of the rounds beside it. This
VM's speed drifts 20-40% over minutes, so one run per framework, one after the other, compares them
at different speeds; interleaved, a slow spell hits every framework alike, and the per-round
ratios (round k of ours over round k of the peer) show how far one invocation's figure can move."""

from __future__ import annotations


def middle(runs: list[dict], first=()) -> dict:
    """The run with the median ``median_ms`` (the first when every run failed), with the keys in
    ``first`` (first-load and cold-start times: only the first run starts cold) from the first run,
    and ``rounds_ms``: every round's ``median_ms`` in run order (None for a failed round)."""
    ok = sorted((r for r in runs if "error" not in r), key=lambda r: r["median_ms"])
    if not ok:
        return runs[0]
    earliest = next(r for r in runs if "error" not in r)
    rounds = [None if "error" in r else r["median_ms"] for r in runs]
    return dict(ok[len(ok) // 2], **{k: earliest[k] for k in first if k in earliest}, rounds_ms=rounds)


def ms_text(result: dict, digits: int = 1) -> str:
    """``median (lowest-highest round)``, the range left out with fewer than two rounds."""
    rounds = [m for m in result.get("rounds_ms", []) if m is not None]
    text = f"{result['median_ms']:.{digits}f}"
    return text + (f" ({min(rounds):.{digits}f}-{max(rounds):.{digits}f})" if len(rounds) > 1 else "")


def ratio_text(ours: dict, theirs: dict) -> str:
    """The middle runs' ratio, and the range of the per-round ratios (rounds are interleaved, so
    round k of each ran at about the same machine speed)."""
    pairs = [a / b for a, b in zip(ours.get("rounds_ms", []), theirs.get("rounds_ms", []), strict=False) if a and b]
    text = f"{ours['median_ms'] / theirs['median_ms']:.2f}x"
    return text + (f" ({min(pairs):.2f}-{max(pairs):.2f})" if len(pairs) > 1 else "")
