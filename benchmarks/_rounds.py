"""Shared by the benchmark scripts: each framework runs several times, interleaved with its peers,
and the run with the middle latency is reported. This VM's speed drifts 20-40% over minutes, so
one run per framework, one after the other, compares them at different speeds; interleaved, a slow
spell hits every framework alike."""

from __future__ import annotations


def middle(runs: list[dict], first=()) -> dict:
    """The run with the median ``median_ms`` (the first when every run failed), with the keys in
    ``first`` (first-load and cold-start times: only the first run starts cold) from the first run."""
    ok = sorted((r for r in runs if "error" not in r), key=lambda r: r["median_ms"])
    if not ok:
        return runs[0]
    earliest = next(r for r in runs if "error" not in r)
    return dict(ok[len(ok) // 2], **{k: earliest[k] for k in first if k in earliest})
