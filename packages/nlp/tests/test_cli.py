"""`paddlectl nlp embed|search|compare` end to end (typer's runner, in process): tables, the JSON
record, and one `error:` line with exit 2 for each bad input."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import _hf_bert
import numpy as np
import pytest
from typer.testing import CliRunner

from paddlectl.nlp import compare as compare_module
from paddlectl.nlp.cli import app
from paddlectl.nlp.embed import Embedder

runner = CliRunner()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_bert")
    _hf_bert.write(root)
    return root


def _errors(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


def test_the_command_is_registered_for_paddlectl(tiny):
    assert entry_points(group="paddlectl.commands")["nlp"].load() is app
    from paddlectl.cli.app import app as paddlectl

    result = runner.invoke(
        paddlectl, ["nlp", "search", "--corpus", str(tiny / "vocab.txt"), "--model", str(tiny), "cat"]
    )
    assert result.exit_code == 0 and "search: cat" in result.output, result.output
    result = runner.invoke(paddlectl, ["nlp", "generate", "--help"])
    assert result.exit_code == 0 and "Continue each prompt" in result.output, result.output


def test_embed_prints_the_matrix_and_writes_json_in_input_order(tiny, tmp_path):
    texts = ["the cat sat", "dogs!", "你好世界"]
    out = tmp_path / "sub" / "emb.json"
    result = runner.invoke(app, ["embed", *texts, "--model", str(tiny), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "cosine similarity" in result.output and "1.0000" in result.output
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["model"] == str(tiny) and record["texts"] == texts
    np.testing.assert_allclose(record["embeddings"], Embedder.from_pretrained(tiny).encode(texts), atol=1e-6)


def test_embed_reads_a_file_and_states_truncation(tiny, tmp_path):
    corpus = tmp_path / "texts.txt"
    corpus.write_text("the cat sat\n\n" + "the " * 40 + "\n", encoding="utf-8")
    result = runner.invoke(app, ["embed", "--file", str(corpus), "--model", str(tiny)])
    assert result.exit_code == 0, result.output
    assert "note: text 1 is 42 tokens; only its first 24 are embedded" in result.output
    refused = runner.invoke(app, ["embed", "--file", str(corpus), "--model", str(tiny), "--no-truncation"])
    assert refused.exit_code == 2 and _errors(refused) == [
        "error: text 1 is 42 tokens, past the model's 24; drop --no-truncation to cut it"
    ]


def test_embed_prints_at_most_16_texts_and_says_so(tiny, tmp_path):
    texts = [f"the cat {w}" for w in "abcdefghijklmnopqrst"]
    result = runner.invoke(app, ["embed", *texts, "--model", str(tiny), "--json", str(tmp_path / "e.json")])
    assert result.exit_code == 0 and "note: the matrix shows the first 16 of 20 texts" in result.output
    assert len(json.loads((tmp_path / "e.json").read_text())["embeddings"]) == 20


def test_search_ranks_the_corpus_by_cosine(tiny, tmp_path):
    corpus = tmp_path / "corpus.txt"
    documents = ["the cat sat on the mat", "dogs", "你好", "the dog sat"]
    corpus.write_text("\n".join(documents), encoding="utf-8")
    result = runner.invoke(app, ["search", "--corpus", str(corpus), "--model", str(tiny), "--top", "2", "the cat sat"])
    assert result.exit_code == 0, result.output
    embedder = Embedder.from_pretrained(tiny)
    vectors = embedder.encode(["the cat sat", *documents])
    best = np.argsort(-(vectors[1:] @ vectors[0]))[:2]
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert [documents[i] for i in best] == [row.split("│")[4].strip() for row in rows]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["embed"], "give the texts as arguments or with --file"),
        (["embed", "a", "--file", "x.txt"], "give the texts as arguments or with --file"),
        (["embed", "ok", ""], "text 1 is empty"),
        (["embed", "--file", "missing.txt"], "--file missing.txt cannot be read"),
        (["embed", "--file", "blank.txt"], "has no non-blank line"),
        (["embed", "--file", "latin1.txt"], "is not UTF-8 text"),
        (["embed", "ok", "--model", "nowhere"], "nowhere is not a directory"),
        (["search", "--corpus", "blank.txt", "q"], "has no non-blank line"),
        (["search", "--corpus", "latin1.txt", " "], "is not UTF-8 text"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "blank.txt").write_text("\n  \n")
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    errors = _errors(result)
    assert len(errors) == 1 and message in errors[0]


def test_a_checkpoint_with_an_unexpected_key_is_exit_2_naming_it(tmp_path):
    import safetensors.numpy

    weights = _hf_bert.write(tmp_path)
    safetensors.numpy.save_file(
        {**weights, "cls.seq_relationship.bias": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors")
    )
    result = runner.invoke(app, ["embed", "hello", "--model", str(tmp_path)])
    assert result.exit_code == 2 and "unexpected [cls.seq_relationship.bias]" in _errors(result)[0]


def test_compare_without_transformers_says_how_to_install_it(tiny, monkeypatch):
    real = compare_module.importlib.util.find_spec
    monkeypatch.setattr(
        compare_module.importlib.util,
        "find_spec",
        lambda name: None if name in ("torch", "transformers") else real(name),  # whatever is installed here
    )
    result = runner.invoke(app, ["compare", "--hf", str(tiny)])
    assert result.exit_code == 2
    assert _errors(result) == [
        "error: paddlectl nlp compare needs torch and transformers (the reference): pip install torch transformers"
    ]
