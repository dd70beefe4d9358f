"""`paddlectl speech synth`: espeak-ng corpora that repeat with their seed, cover the English voices,
and leave nothing behind when they fail. These tests need espeak-ng; without it they fail (never skip)
and say what to install."""

import hashlib
import json
import shutil

import numpy as np
import pytest
import soundfile
from typer.testing import CliRunner

from paddlectl.speech import synth
from paddlectl.speech.cli_speech import app
from paddlectl.speech.errors import SynthError
from paddlectl.speech.manifest import read_manifest
from paddlectl.speech.vocab import Vocabulary


@pytest.fixture(autouse=True)
def _espeak_ng():
    if shutil.which("espeak-ng") is None:
        pytest.fail(f"these tests need espeak-ng: {synth.INSTALL_HINT}")


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((folder / "wavs").iterdir())}


def test_a_corpus_is_16k_mono_speech_with_its_manifest_and_vocab(tmp_path):
    out = synth.synthesize(tmp_path / "corpus", 6, seed=3)
    utts = read_manifest(out / "manifest.jsonl")
    vocab = Vocabulary.load(out / "vocab.txt")
    assert len(utts) == 6 and {p.name for p in out.iterdir()} == {"wavs", "manifest.jsonl", "vocab.txt", "corpus.json"}
    for utt in utts:
        samples, rate = soundfile.read(utt.feat)
        assert rate == 16000 and samples.ndim == 1 and utt.duration == pytest.approx(len(samples) / 16000, abs=1e-3)
        assert 0.3 <= np.abs(samples).max() <= 0.9 and utt.speaker.count("+") == 1
        assert vocab.decode(vocab.encode(utt.text)) == utt.text and vocab.unk_id not in vocab.encode(utt.text)
        assert set(utt.text.split()) <= set(synth.lexicon())
    assert json.loads((out / "corpus.json").read_text())["synthesiser"]["name"] == "espeak-ng"


def test_a_relative_out_folder_gives_paths_relative_to_the_manifest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    synth.synthesize("rel/corpus", 1, seed=5)
    line = json.loads((tmp_path / "rel/corpus/manifest.jsonl").read_text())
    assert line["feat"] == "wavs/synth-5-000000.wav"


def test_the_same_seed_gives_the_same_corpus(tmp_path):
    first = synth.synthesize(tmp_path / "a", 4, seed=11, workers=1)
    second = synth.synthesize(tmp_path / "b", 4, seed=11, workers=3)
    assert _digest(first) == _digest(second)
    assert (first / "manifest.jsonl").read_text() == (second / "manifest.jsonl").read_text()
    assert _digest(synth.synthesize(tmp_path / "c", 4, seed=12)) != _digest(first)


def test_every_english_voice_and_variant_is_a_speaker():
    voices, kinds = synth.english_voices(), synth.variants()
    assert {"en-us", "en-gb", "en-gb-scotland"} <= set(voices) and len(kinds) > 50
    assert not any(v.startswith(("mb-", "variant")) for v in voices)
    speakers = synth._speakers(None)
    assert len(speakers) == len(voices) * len(kinds)
    drawn = {synth.draw(i, 0, speakers).voice.split("+")[0] for i in range(400)}
    assert drawn == set(voices)


def test_voices_can_be_held_out(tmp_path):
    out = synth.synthesize(tmp_path / "held", 3, seed=2, voices=["en-gb-scotland+f2", "en-029"])
    speakers = {u.speaker for u in read_manifest(out / "manifest.jsonl")}
    assert all(s == "en-gb-scotland+f2" or s.startswith("en-029+") for s in speakers)
    with pytest.raises(SynthError, match="unknown English voice 'fr'"):
        synth.synthesize(tmp_path / "x", 1, voices=["fr"])
    with pytest.raises(SynthError, match="unknown voice variant"):
        synth.synthesize(tmp_path / "x", 1, voices=["en-us+nobody"])


def test_a_failure_leaves_nothing_behind(tmp_path, monkeypatch):
    real = synth.speak

    def fail_on_third(item, workdir):
        if item.utt.endswith("000002"):
            raise SynthError("espeak-ng failed on purpose")
        return real(item, workdir)

    monkeypatch.setattr(synth, "speak", fail_on_third)
    with pytest.raises(SynthError, match="on purpose"):
        synth.synthesize(tmp_path / "corpus", 4, seed=1, workers=1)
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_a_corpus_and_refuses_a_used_folder(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["synth", "--out", str(tmp_path / "c"), "--n", "2", "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert len(read_manifest(tmp_path / "c" / "manifest.jsonl")) == 2
    again = runner.invoke(app, ["synth", "--out", str(tmp_path / "c"), "--n", "2"])
    assert again.exit_code == 2 and "already exists" in again.output and "Traceback" not in again.output
    bad = runner.invoke(app, ["synth", "--out", str(tmp_path / "d"), "--n", "0"])
    assert bad.exit_code == 2 and not (tmp_path / "d").exists()


def test_a_missing_espeak_ng_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setattr(synth.shutil, "which", lambda name: None)
    result = CliRunner().invoke(app, ["synth", "--out", str(tmp_path / "c"), "--n", "1"])
    assert result.exit_code == 2 and "apt-get install -y espeak-ng" in result.output
    assert not (tmp_path / "c").exists()
