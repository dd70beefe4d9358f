"""The migration check against transformers (torch CPU): the torch_oracle session runs these; they
skip where transformers is not installed."""

from __future__ import annotations

import _hf_bert
import numpy as np
from typer.testing import CliRunner

from paddlectl.nlp.cli import app
from paddlectl.nlp.compare import SAMPLES, compare_with_transformers
from paddlectl.nlp.tokenizer import AutoTokenizer

runner = CliRunner()


def test_tiny_random_bert_matches_transformers_layer_by_layer(transformers, tmp_path):
    _hf_bert.write(tmp_path)
    checks = compare_with_transformers(tmp_path, samples=["the cat sat on the mat.", "dogs!", "你好世界"])
    names = [c.name for c in checks]
    assert names[:4] == ["tokenizer ids", "embeddings output", "layer 1 hidden states", "layer 2 hidden states"]
    assert "pooler output" in names and all(c.ok for c in checks), checks


def test_minilm_matches_transformers_on_the_fixed_samples(transformers, minilm_dir):
    checks = compare_with_transformers(minilm_dir)
    assert all(c.ok for c in checks), checks
    assert len([c for c in checks if c.name.startswith("layer ")]) == 6


def test_compare_command_exits_1_past_the_tolerance_and_0_within(transformers, tmp_path):
    _hf_bert.write(tmp_path)
    ok = runner.invoke(app, ["compare", "--hf", str(tmp_path)])
    assert ok.exit_code == 0, ok.output
    strict = runner.invoke(app, ["compare", "--hf", str(tmp_path), "--tolerance", "1e-12"])
    assert strict.exit_code == 1 and "NO" in strict.output


def test_tokenizer_equals_transformers_with_pairs_padding_truncation_offsets(transformers, minilm_dir):
    ours = AutoTokenizer.from_pretrained(minilm_dir)
    theirs = transformers.AutoTokenizer.from_pretrained(str(minilm_dir), local_files_only=True)
    kwargs = {"padding": True, "truncation": True, "max_length": 16, "return_offsets_mapping": True}
    pairs = list(SAMPLES[::-1])
    got, want = ours(list(SAMPLES), pairs, **kwargs), theirs(list(SAMPLES), pairs, **kwargs)
    for key in ("input_ids", "token_type_ids", "attention_mask"):
        assert got[key] == want[key], key
    assert got["offset_mapping"] == [[tuple(o) for o in row] for row in want["offset_mapping"]]


def test_minilm_embeddings_equal_transformers_mean_pooled(transformers, minilm_dir):
    import torch

    from paddlectl.nlp.embed import Embedder

    texts = [
        f"Sentence number {i} talks about {topic}."
        for i, topic in enumerate(["cats", "stocks", "rain", "chess", "天气"])
    ]
    ours = Embedder.from_pretrained(minilm_dir).encode(texts)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(minilm_dir), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(str(minilm_dir), local_files_only=True).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    theirs = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-4)
    assert float(np.min((ours * theirs).sum(1))) >= 0.99999
