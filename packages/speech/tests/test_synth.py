"""`paddlectl speech synth`: espeak-ng and flite corpora that repeat with their seed, cover the English
voices, and leave nothing behind when they fail. These tests need espeak-ng and flite; without them they
fail (never skip) and say what to install."""

import hashlib
import json
import shutil
import subprocess

import numpy as np
import pytest
import soundfile
from typer.testing import CliRunner

from paddlectl.speech import synth, voices
from paddlectl.speech.cli_speech import app
from paddlectl.speech.errors import SynthError
from paddlectl.speech.manifest import read_manifest
from paddlectl.speech.vocab import Vocabulary


@pytest.fixture(autouse=True)
def _synthesisers():
    for program, hint in (("espeak-ng", voices.INSTALL_HINT), ("flite", voices.FLITE_HINT)):
        if shutil.which(program) is None:
            pytest.fail(f"these tests need {program}: {hint}")


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
        assert 0.3 <= np.abs(samples).max() <= 0.9 and (utt.speaker.count("+") == 1 or voices.is_flite(utt.speaker))
        assert vocab.decode(vocab.encode(utt.text)) == utt.text and vocab.unk_id not in vocab.encode(utt.text)
        assert set(utt.text.split()) <= set(synth.lexicon())
    card = json.loads((out / "corpus.json").read_text())
    programs = {"flite" if voices.is_flite(u.speaker) else "espeak-ng" for u in utts}
    assert {s["name"] for s in card["synthesisers"]} == programs == {"espeak-ng", "flite"}  # seed 3 draws both
    assert all(s["version"][0].isdigit() and s["license"] for s in card["synthesisers"])


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


def test_every_english_voice_and_variant_and_every_flite_voice_is_a_speaker():
    english, kinds, flite = voices.english_voices(), voices.variants(), voices.flite_voices()
    assert {"en-us", "en-gb", "en-gb-scotland"} <= set(english) and len(kinds) > 50
    assert not any(v.startswith(("mb-", "variant")) for v in english)
    assert {"flite:awb", "flite:rms", "flite:slt"} <= set(flite)
    assert "flite:awb_time" not in flite  # it says the time only
    speakers = voices.speakers(None)
    assert len(speakers) == len(english) * len(kinds) + len(flite)
    drawn = [synth.draw(i, 0, speakers) for i in range(600)]
    assert {d.voice.split("+")[0] for d in drawn} == set(english) | set(flite)
    assert 0.4 < sum(voices.is_flite(d.voice) for d in drawn) / len(drawn) < 0.6  # half each, not 5 in 800
    assert {d.pitch for d in drawn if voices.is_flite(d.voice)} == set(synth.FLITE_F0_HZ)


def test_an_espeak_only_corpus_draws_as_before_flite_joined():
    """The shipped model's corpus (six espeak-ng voices) must rebuild the same: no draw for the program
    (these are the draws of the espeak-only code, espeak-ng 1.51's variants)."""
    only = voices.speakers(["en-us", "en-gb"])
    assert [synth.draw(i, 1, only) for i in range(3)] == [
        synth.Draw("synth-1-000000", "go backward one meter", "en-gb+robosoft8", 120, 25, (1, 0)),
        synth.Draw("synth-1-000001", "six six", "en-gb+Alicia", 175, 25, (1, 1)),
        synth.Draw("synth-1-000002", "four zero four one", "en-us+john", 230, 75, (1, 2)),
    ]


def test_flite_speaks_at_the_drawn_rate_and_pitch(tmp_path):
    slow, fast = (voices.command("flite:slt", "six", rate, 160, tmp_path / f"{rate}.wav") for rate in (120, 230))
    for line in (slow, fast):
        assert subprocess.run(line, capture_output=True, check=False).returncode == 0
    length = {rate: soundfile.info(tmp_path / f"{rate}.wav").duration for rate in (120, 230)}
    assert length[120] > 1.5 * length[230]
    assert "int_f0_target_mean=160" in slow


def test_voices_can_be_held_out(tmp_path):
    out = synth.synthesize(tmp_path / "held", 6, seed=2, voices=["en-gb-scotland+f2", "en-029", "flite:slt"])
    speakers = {u.speaker for u in read_manifest(out / "manifest.jsonl")}
    assert all(s in ("en-gb-scotland+f2", "flite:slt") or s.startswith("en-029+") for s in speakers)
    assert "flite:slt" in speakers
    with pytest.raises(SynthError, match="unknown flite voice 'flite:nobody': choose from flite:awb"):
        synth.synthesize(tmp_path / "x", 1, voices=["flite:nobody"])
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


def test_a_missing_synthesiser_names_its_package(tmp_path, monkeypatch):
    real = shutil.which
    monkeypatch.setattr(voices.shutil, "which", lambda name: None)
    result = CliRunner().invoke(app, ["synth", "--out", str(tmp_path / "c"), "--n", "1"])
    assert result.exit_code == 2 and "apt-get install -y espeak-ng" in result.output
    monkeypatch.setattr(voices.shutil, "which", lambda name: None if name == "flite" else real(name))
    result = CliRunner().invoke(app, ["synth", "--out", str(tmp_path / "c"), "--n", "1"])
    assert result.exit_code == 2 and "apt-get install -y flite" in result.output and "--voice" in result.output
    assert not (tmp_path / "c").exists()
    only_espeak = CliRunner().invoke(app, ["synth", "--out", str(tmp_path / "e"), "--n", "1", "--voice", "en-us"])
    assert only_espeak.exit_code == 0, only_espeak.output
