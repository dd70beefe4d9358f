"""What validation costs the ONNX importer: ``import_onnx`` of the PP-OCRv4 detection model (the file
shipped in the rapidocr-onnxruntime wheel) with the validation step (``onnx.validate``:
IR/opset range, ``onnx.checker.check_model(full_check=True)``, tensor checks) and without it (the
opset lookup only), interleaved so that a slow spell of the machine hits both alike. Also times
the validation step alone. Goal: validation adds under 5% to the import.

    python benchmarks/loader_validation.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import onnx
import rapidocr_onnxruntime

from paddlectl.framework.onnx import importer, validate

GOAL = 0.05
MODEL = os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models", "ch_PP-OCRv4_det_infer.onnx")


def _import_seconds(checked: bool) -> float:
    importer.validate_model = validate.validate_model if checked else validate.opset_of
    try:
        start = time.perf_counter()
        importer.import_onnx(MODEL)
        return time.perf_counter() - start
    finally:
        importer.validate_model = validate.validate_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each variant (median reported)")
    args = parser.parse_args()
    _import_seconds(True)  # warm: imports, the OS file cache, the ops' first use
    runs: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeat):
        for checked in (False, True):
            runs[checked].append(_import_seconds(checked))
    model = onnx.load(MODEL)
    alone = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        validate.validate_model(model)
        alone.append(time.perf_counter() - start)
    plain, checked = statistics.median(runs[False]), statistics.median(runs[True])
    step = statistics.median(alone)
    print(f"model: {os.path.basename(MODEL)} ({os.path.getsize(MODEL) / 1e6:.1f} MB), {args.repeat} runs each")
    print(f"import without validation: median {plain * 1e3:8.1f} ms")
    print(f"import with validation:    median {checked * 1e3:8.1f} ms")
    print(f"validation step alone:     median {step * 1e3:8.1f} ms = {step / plain:.1%} of the import")
    print(f"ratio with/without: {checked / plain:.3f} (goal: under {1 + GOAL:.2f})")


if __name__ == "__main__":
    main()
