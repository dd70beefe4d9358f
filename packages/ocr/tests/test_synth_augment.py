"""The line crops' render-time augmentation: stroke width moves ink edges by the asked distance, slant
leans the glyphs and carries the quad, both are seeded, and only the training split is augmented."""

from __future__ import annotations

import json

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon

from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.ocr.synth import augment, charset, dataset, fonts, layer, run, scene

LATIN = charset.resolve([])
PALETTE = dataset.palette([fonts.resolve("DejaVuSerif-BoldItalic"), fonts.resolve("DejaVuSans")], LATIN)
AUGMENTED = scene.Settings(line_slant=0.3, line_stroke=0.03)


def bar(width: int = 6, height: int = 20) -> np.ndarray:
    """A vertical bar ``width`` pixels wide, half-covered columns either side (anti-aliased edges)."""
    alpha = np.zeros((height, 40), np.float32)
    alpha[:, 17 : 17 + width] = 1.0
    alpha[:, 16] = alpha[:, 17 + width] = 0.5
    return alpha


@pytest.mark.parametrize("delta", [-2.0, -1.0, -0.5, 0.5, 1.0, 2.5])
def test_stroke_moves_each_edge_by_delta(delta):
    alpha = bar()
    widened = augment.stroke(alpha, delta)
    assert widened.dtype == np.float32 and widened.shape == alpha.shape
    assert 0.0 <= widened.min() and widened.max() <= 1.0
    # ink per row (coverage summed) is the bar's width: 6 + 2 half columns = 7, plus delta on each side
    np.testing.assert_allclose(widened.sum(axis=1), 7 + 2 * delta, atol=1e-5)


def test_stroke_by_zero_keeps_the_anti_aliased_edges():
    sample = layer.text_layer("Rag", fonts.resolve("DejaVuSerif-Italic").at(30), margin=8)
    np.testing.assert_array_equal(augment.stroke(sample.alpha, 0.0), sample.alpha)
    bolder, lighter = augment.stroke(sample.alpha, 0.7), augment.stroke(sample.alpha, -0.7)
    assert ((bolder > 0) & (bolder < 1)).sum() > 0.5 * ((sample.alpha > 0) & (sample.alpha < 1)).sum()
    assert lighter.sum() < sample.alpha.sum() < bolder.sum()
    assert (lighter <= sample.alpha + 1e-6).all() and (bolder >= sample.alpha - 1e-6).all()


def test_stroke_refuses_what_is_not_a_coverage_mask():
    with pytest.raises(DTypeError, match="float32 coverage"):
        augment.stroke(bar().astype(np.uint8), 1.0)
    with pytest.raises(ShapeError, match="HxW"):
        augment.stroke(np.zeros((4, 4, 3), np.float32), 1.0)


@pytest.mark.parametrize("shear", [-0.3, 0.25])
def test_slant_leans_the_ink_and_carries_the_quad(shear):
    alpha = bar(height=21)
    quad = np.array([[15.5, -0.5], [23.5, -0.5], [23.5, 20.5], [15.5, 20.5]], np.float32)
    leaned = augment.slant(layer.Layer(alpha, quad), shear)
    h, w = leaned.alpha.shape
    assert h == 21 and w == 40 + int(np.ceil(abs(shear) * 21))
    columns = np.arange(w, dtype=np.float32)
    centre = (leaned.alpha * columns).sum(axis=1) / leaned.alpha.sum(axis=1)
    np.testing.assert_allclose(centre[0] - centre[-1], shear * 20, atol=0.05)  # top row leans by shear x rows
    np.testing.assert_allclose(leaned.alpha.sum(), alpha.sum(), rtol=1e-3)
    ys, xs = np.nonzero(leaned.alpha > 0.5)
    assert shapely.contains_xy(Polygon(leaned.quad).buffer(0.5), xs, ys).all()


def test_augmented_lines_are_seeded_and_differ_from_plain_ones():
    def render(settings, index):
        return scene.render_line(np.random.default_rng([5, 1, index]), PALETTE, settings)

    for index in range(4):
        first, again, plain = render(AUGMENTED, index), render(AUGMENTED, index), render(scene.Settings(), index)
        np.testing.assert_array_equal(first.image, again.image)
        assert first.lines[0][0] == plain.lines[0][0]  # same text, drawn differently
        assert first.image.shape != plain.image.shape or (first.image != plain.image).any()
        ys, xs = np.nonzero(first.ink > 0.5)
        assert shapely.contains_xy(Polygon(first.lines[0][1]).buffer(2.0), xs, ys).all()


def test_only_the_training_split_is_augmented(tmp_path):
    def render(settings, out):
        plan = dataset.Plan(6, LATIN, [fonts.resolve("DejaVuSans")], kinds=("rec",), val_fraction=0.5, seed=3)
        plan.settings = settings
        dataset.generate(plan, out, workers=1)
        return {p.name: p.read_bytes() for p in (out / "rec" / "images").iterdir()}

    augmented, plain = render(AUGMENTED, tmp_path / "a"), render(scene.Settings(), tmp_path / "p")
    train, val = sorted(plain)[:3], sorted(plain)[3:]
    assert all(augmented[name] != plain[name] for name in train)
    assert all(augmented[name] == plain[name] for name in val)


def test_the_command_augments_by_default_and_records_it(tmp_path):
    from typer.testing import CliRunner

    from paddlectl.ocr.cli import app

    def manifest(*flags):
        out = tmp_path / f"set{len(flags)}"
        args = ["synth", "--out", str(out), "--n", "4", "--kind", "lines", "--fonts", "DejaVuSans", *flags]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return json.loads((out / "synth.json").read_text())

    on, off = manifest(), manifest("--no-augment")
    assert (on["line_slant"], on["line_stroke"]) == (run.LINE_SLANT, run.LINE_STROKE) != (0.0, 0.0)
    assert (off["line_slant"], off["line_stroke"]) == (0.0, 0.0)
