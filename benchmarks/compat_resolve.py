"""Resolution time of the compat-matrix resolver on a generated matrix of 50 packages x 200 versions.

Each package depends on the next three with a version window, so the newest versions pull in
the newest of the rest; the newest versions of the last package need a Python the target does
not have, which forces backtracking through the chain. Target: under 1 s per resolution.

    python benchmarks/compat_resolve.py [--packages 50] [--versions 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

try:
    from paddlectl.compat_matrix.matrix import Matrix
except ImportError:  # run from a checkout without installing: the namespace spans src folders
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools/compat_matrix/src"))
    try:
        from paddlectl.compat_matrix.matrix import Matrix
    except ImportError as exc:  # its dependencies (resolvelib ...) are missing in this environment
        print(
            f"compat_resolve: skipped, paddlectl-compat-matrix cannot be imported here ({exc}); "
            "pip install -e tools/compat_matrix"
        )
        sys.exit(0)

from paddlectl.compat_matrix.model import Candidate, Claim, Package, Source, parse_requirement, parse_version
from paddlectl.compat_matrix.plan import plan
from paddlectl.compat_matrix.platform import make_platform
from paddlectl.compat_matrix.resolver import Context

SOURCE = Source("bench", "generated benchmark matrix", "benchmarks/compat_resolve.py", "generated")


def version(k: int) -> str:
    return f"{k // 20}.{k % 20}.0"


def generate(packages: int, versions: int) -> Matrix:
    matrix = Matrix()
    for i in range(packages):
        name = f"g{i:02d}"
        package = Package(name, "bench", "bench")
        for k in range(versions):
            texts = [
                f"g{j:02d}>={version(max(0, k - 30))},<{version(k + 10)}" for j in range(i + 1, min(packages, i + 4))
            ]
            texts.append("__python>=3.8")
            if i == packages - 1 and k >= versions - 5:
                texts.append("__python>=3.99")  # the newest of the last package cannot be installed
            claims = tuple(Claim(parse_requirement(t), SOURCE, "declared", "bench") for t in texts)
            package.candidates.append(Candidate(name, parse_version(version(k)), claims=claims, label=version(k)))
        package.candidates.reverse()
        matrix.packages[name] = package
    return matrix


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """First (cold caches) and median of the rest (warm) wall times of ``fn``."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:] or times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=50)
    parser.add_argument("--versions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-freeze", action="store_true", help="leave the loaded matrix to the garbage collector")
    args, _ = parser.parse_known_args()
    start = time.perf_counter()
    matrix = generate(args.packages, args.versions)
    built = time.perf_counter() - start
    # The matrix is loaded once and then only read: keep the collector from rescanning it (the
    # 10,000 candidates and their claims) on every collection during resolution.
    if not args.no_freeze:
        gc.collect()
        gc.freeze()
    target = make_platform({"python": "3.11", "os": "linux", "arch": "x86_64"}, "bench", "bench")
    newest = version(args.versions - 1)
    print(
        f"compat_resolve: {args.packages} packages x {args.versions} versions, {sum(len(p.candidates) for p in matrix.packages.values())} candidates (generated in {built:.2f} s)"
    )
    cases = [
        (
            "resolve g00 (newest g49 needs a Python the target lacks: backtracks)",
            [parse_requirement("g00", "requested")],
            None,
        ),
        (
            f"resolve all {args.packages} packages at once",
            [parse_requirement(n, "requested") for n in matrix.packages],
            None,
        ),
    ]
    worst = 0.0
    for label, roots, _ in cases:
        cold, warm, solution = timed(lambda r=roots: Context(matrix, target).resolve(r), args.repeat)
        worst = max(worst, cold)
        print(f"  {label}: {cold * 1000:.0f} ms cold, {warm * 1000:.0f} ms warm, {len(solution.packages())} packages")
    installed = {n: p.candidates[-1] for n, p in matrix.packages.items()}
    upgrade = [parse_requirement(f"g00=={newest}", "requested")]
    cold, warm, result = timed(lambda: plan(Context(matrix, target), installed, upgrade), max(2, args.repeat // 2))
    print(
        f"  plan g00 {version(0)} -> {newest} with all {args.packages} installed at {version(0)}: "
        f"{cold * 1000:.0f} ms cold, {warm * 1000:.0f} ms warm, {len(result.changes)} changes (resolve + minimisation trials)"
    )
    print(
        f"  target: one resolution under 1000 ms -> {'met' if worst < 1.0 else 'NOT met'} (worst cold {worst * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    main()
