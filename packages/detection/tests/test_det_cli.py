"""``paddlectl det predict`` end to end (typer's CliRunner on the plugin app): a rendered page through
the layout model, its PaddleX JSON and picture; bad input exits 2 with one line before any work."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import numpy as np
from _pages import page
from PIL import Image
from typer.testing import CliRunner

from paddlectl.detection.cli import app


def det(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_the_plugin_is_registered():
    found = {ep.name: ep.value for ep in entry_points(group="paddlectl.commands")}
    assert found.get("det") == "paddlectl.detection.cli:app"


def test_predict_writes_records_in_original_pixels(tmp_path):
    image = page(0)  # 1240 x 1754
    Image.fromarray(image).save(tmp_path / "page.png")
    out, vis = tmp_path / "dets.json", tmp_path / "vis"
    result = det("predict", "--models", "layout-cdla", tmp_path / "page.png", "--json", out, "--vis", vis)
    assert result.exit_code == 0, result.output
    (rec,) = json.loads(out.read_text())
    assert rec["input_path"] == str(tmp_path / "page.png") and len(rec["boxes"]) >= 3
    labels = {b["label"] for b in rec["boxes"]}
    assert {"text", "table", "figure"} <= labels, labels
    corners = np.array([b["coordinate"] for b in rec["boxes"]])
    assert (corners[:, 2] <= 1240).all() and (corners[:, 3] <= 1754).all() and corners[:, 3].max() > 1200
    assert min(b["score"] for b in rec["boxes"]) > 0.5
    assert np.asarray(Image.open(vis / "page.png")).shape == image.shape


def test_bad_input_exits_2_with_one_line(tmp_path):
    (tmp_path / "broken.png").write_text("not an image")
    Image.fromarray(page(0, size=(300, 400))).save(tmp_path / "ok.png")
    for args, message in [
        (["predict", tmp_path / "missing.png"], "does not exist"),
        (["predict", tmp_path], "is a directory"),
        (["predict", "--models", "yolo", tmp_path / "ok.png"], "is not known"),
        (["predict", tmp_path / "ok.png", "--json", tmp_path], "--json"),
        (["predict", tmp_path / "ok.png", tmp_path / "broken.png", "--json", tmp_path / "o.json"], "cannot read image"),
    ]:
        result = det(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "o.json").exists()
