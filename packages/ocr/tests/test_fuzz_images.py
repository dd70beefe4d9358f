"""Hostile images: what the OCR chain is given (image files read by the framework's reader, or arrays)
either gives results or raises the framework's ``PaddlectlError``; nothing else may escape (issue 29).

Hypothesis draws PNG and JPEG files of a rendered text line with their header dimensions rewritten,
bytes flipped and the file cut, and arrays of other shapes, dtypes, sizes and values (NaN, empty,
a 1-pixel-high strip 100,000 wide), and runs each through ``read_image`` and ``TextSystem``; and
PDFs with flipped bytes and cuts through ``paddlectl ocr``'s input collection and page rendering.
"""

from __future__ import annotations

import io
import os
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from paddlectl.framework.errors import DataError, PaddlectlError
from paddlectl.framework.vision.image_io import read_image
from paddlectl.ocr.sources import collect
from paddlectl.ocr.synthetic import text_line

FUZZ = settings(
    max_examples=int(os.environ.get("PADDLECTL_FUZZ_EXAMPLES", "30")),
    deadline=30000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def ocr():
    pytest.importorskip("rapidocr_onnxruntime")
    from paddlectl.ocr.pipeline import TextSystem, rapidocr_model_paths

    return TextSystem(*rapidocr_model_paths())


def _encoded(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(text_line("Hi 42"))).convert("RGB").save(buffer, fmt)
    return buffer.getvalue()


SEEDS = {"PNG": _encoded("PNG"), "JPEG": _encoded("JPEG")}


def _png_dims(data: bytes, w: int, h: int) -> bytes:
    """The PNG with its IHDR width and height rewritten (and the chunk's CRC made right again)."""
    body = b"IHDR" + struct.pack(">II", w, h) + data[24:29]
    return data[:12] + body + struct.pack(">I", zlib.crc32(body)) + data[33:]


@FUZZ
@given(
    fmt=st.sampled_from(["PNG", "JPEG"]),
    dims=st.none() | st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1)),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4),
    cut=st.none() | st.integers(0, 10**6),
)
def test_hostile_image_files(tmp_path_factory, ocr, fmt, dims, flips, cut):
    data = bytearray(_png_dims(SEEDS[fmt], *dims) if dims and fmt == "PNG" else SEEDS[fmt])
    for at, xor in flips:
        data[at % len(data)] ^= xor
    path = tmp_path_factory.mktemp("img") / f"x.{fmt.lower()}"
    path.write_bytes(bytes(data if cut is None else data[: cut % (len(data) + 1)]))
    try:
        collect([str(path)])  # `paddlectl ocr`'s up-front check of the header
    except PaddlectlError:
        pass
    try:
        ocr(read_image(path, "RGB"))
    except PaddlectlError:
        pass


ARRAYS = st.one_of(
    st.tuples(st.integers(0, 40), st.integers(0, 40), st.sampled_from([None, 1, 2, 3, 4, 5])),
    st.sampled_from([(1, 100_000, 3), (100_000, 1, None), (2, 3, 4, 3), (5,)]),
)


@FUZZ
@given(shape=ARRAYS, dtype=st.sampled_from(["uint8", "float32", "float64", "int64", "bool"]),
       fill=st.sampled_from([0, 255, -5, 1e9, np.nan, np.inf]))  # fmt: skip
def test_hostile_arrays(ocr, shape, dtype, fill):
    dims = tuple(d for d in shape if d is not None)
    img = np.full(dims, fill if dtype.startswith("float") else abs(np.nan_to_num(fill, posinf=7)) % 256, dtype=dtype)
    try:
        ocr(img)
    except PaddlectlError:
        pass


@pytest.mark.parametrize(
    ("img", "expected"),
    [
        (np.zeros((1, 100_000, 3), np.uint8), "too elongated"),
        (np.zeros((0, 5, 3), np.uint8), "empty"),
        (np.full((20, 20, 3), np.nan, np.float32), "NaN"),
        (np.zeros((4, 4, 2), np.uint8), "HxWxC"),
    ],
)
def test_what_the_fuzzer_found_is_refused(ocr, img, expected):
    with pytest.raises(DataError, match=expected):
        ocr(img)


def test_a_grey_image_is_read_as_grey_not_as_its_first_three_columns(ocr):
    line = np.asarray(Image.fromarray(np.asarray(text_line("Hello 42"))).convert("L"))
    assert [r.text for r in ocr(line)] == [r.text for r in ocr(np.stack([line] * 3, axis=2))]


def _pdf() -> bytes:
    buffer = io.BytesIO()
    page = Image.fromarray(np.asarray(text_line("Hi 42"))).convert("RGB")
    page.save(buffer, "PDF", save_all=True, append_images=[page])
    return buffer.getvalue()


PDF_SEED = _pdf()


@FUZZ
@given(
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=6),
    cut=st.none() | st.integers(0, 10**6),
)
def test_hostile_pdfs(tmp_path_factory, flips, cut):
    data = bytearray(PDF_SEED)
    for at, xor in flips:
        data[at % len(data)] ^= xor
    path = tmp_path_factory.mktemp("pdf") / "x.pdf"
    path.write_bytes(bytes(data if cut is None else data[: cut % (len(data) + 1)]))
    try:
        for source in collect([str(path)]):
            page = source.load()
            assert page.ndim == 3 and page.shape[2] == 3 and page.dtype == np.uint8
    except PaddlectlError:
        pass


def test_a_header_claiming_gigapixels_is_refused_before_the_run(tmp_path):
    """Found by the file fuzzer through `collect`: PIL's DecompressionBombError (not an OSError)
    escaped the header check."""
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_dims(SEEDS["PNG"], 200_000, 200_000))
    with pytest.raises(DataError, match="refusing image"):
        collect([str(path)])
