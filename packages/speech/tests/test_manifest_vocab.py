"""Manifests (PaddleSpeech's JSON lines) and vocabularies (its vocab.txt): round trips and every bad line."""

import json

import numpy as np
import pytest

from paddlectl.speech.audio import read_audio, write_audio
from paddlectl.speech.errors import ManifestError, VocabularyError
from paddlectl.speech.manifest import Utterance, read_manifest, write_manifest
from paddlectl.speech.vocab import BLANK, EOS, SPACE, UNK, Vocabulary


@pytest.fixture
def corpus(tmp_path):
    t = np.arange(8000) / 16000
    for name in ("a", "b"):
        write_audio(tmp_path / "wavs" / f"{name}.wav", 0.3 * np.sin(2 * np.pi * 300 * t))
    utts = [
        Utterance("a", tmp_path / "wavs/a.wav", 0.5, "one two"),
        Utterance("b", tmp_path / "wavs/b.wav", 0.5, "stop"),
    ]
    return write_manifest(tmp_path / "manifest.jsonl", utts), utts


def test_manifest_round_trip_keeps_paths_relative(corpus):
    path, utts = corpus
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {"utt": "a", "feat": "wavs/a.wav", "feat_shape": [0.5], "text": "one two"}
    assert read_manifest(path) == [Utterance(u.utt, u.feat.resolve(), u.duration, u.text) for u in utts]


@pytest.mark.parametrize(
    "line,message",
    [
        (
            '{"utt": "c", "feat": "wavs/nothing.wav", "feat_shape": [1.0], "text": "x"}',
            "line 3: audio file 'wavs/nothing.wav' does not exist",
        ),
        ('{"utt": "c", "feat": "wavs/a.wav", "text": "x"}', "line 3: missing feat_shape"),
        ('{"utt": "c", "feat": "wavs/a.wav", "feat_shape": [0], "text": "x"}', "line 3: feat_shape must be"),
        ('{"utt": "a", "feat": "wavs/a.wav", "feat_shape": [1.0], "text": "x"}', "line 3: utt 'a' repeats line 1"),
        ('{"utt": "c", "feat": "wavs/a.wav", "feat_shape": [1.0], "text": 5}', "line 3: text must be a string"),
        ("not json", "line 3: not JSON"),
        ("[1, 2]", "line 3: expected a JSON object"),
    ],
)
def test_a_bad_manifest_line_is_named(corpus, line, message):
    path, _ = corpus
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(ManifestError, match=message.replace("[", r"\[")):
        read_manifest(path)


def test_missing_and_empty_manifests(tmp_path):
    with pytest.raises(ManifestError, match="does not exist"):
        read_manifest(tmp_path / "none.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ManifestError, match="no utterances"):
        read_manifest(tmp_path / "empty.jsonl")
    (tmp_path / "m.jsonl").write_text('{"utt": "c", "feat": "gone.wav", "feat_shape": [1.0], "text": "x"}\n')
    assert read_manifest(tmp_path / "m.jsonl", check_files=False)[0].feat == (tmp_path / "gone.wav").resolve()


def test_char_vocabulary_follows_paddlespeech(tmp_path):
    vocab = Vocabulary.build(["go left", "stop"])
    assert vocab.tokens == [BLANK, UNK, SPACE, "e", "f", "g", "l", "o", "p", "s", "t", EOS]
    ids = vocab.encode("go stop")
    assert ids[2] == vocab.ids[SPACE] and vocab.decode([0, *ids, 0]) == "go stop"
    assert vocab.encode("gx") == [vocab.ids["g"], vocab.unk_id]
    loaded = Vocabulary.load(vocab.save(tmp_path / "vocab.txt"))
    assert loaded.tokens == vocab.tokens and (tmp_path / "vocab.txt").read_text().startswith("<blank>\n<unk>\n")


def test_word_vocabulary_and_indexed_lines(tmp_path):
    (tmp_path / "v.txt").write_text("<blank> 0\n<unk> 1\none 2\ntwo 3\n<eos> 4\n")
    vocab = Vocabulary.load(tmp_path / "v.txt", unit="word")
    assert vocab.encode("two one three") == [3, 2, 1] and vocab.decode([3, 0, 2]) == "two one"


@pytest.mark.parametrize(
    "content,message",
    [("a\n<blank>\n", "first token must be <blank>"), ("<blank>\na\na\n", "repeat"), ("<blank>\n\na\n", "line 2 is empty"),
     ("<blank>\nab\n", "multi-character")],
)  # fmt: skip
def test_bad_vocabularies(tmp_path, content, message):
    (tmp_path / "v.txt").write_text(content)
    with pytest.raises(VocabularyError, match=message):
        Vocabulary.load(tmp_path / "v.txt")


def test_model_output_size_must_match_the_vocabulary():
    vocab = Vocabulary.build(["yes no"])
    vocab.check_output_size(len(vocab))
    with pytest.raises(VocabularyError, match="predicts 5 classes but the vocabulary has"):
        vocab.check_output_size(5)
    with pytest.raises(VocabularyError, match="no <unk>"):
        Vocabulary(["<blank>", "a"]).encode("b")


def test_read_audio_downmixes_and_resamples(tmp_path):
    from paddlectl.framework import audio

    t = np.arange(44100) / 44100
    stereo = np.stack([np.sin(2 * np.pi * 500 * t), np.zeros_like(t)]).astype("float32") * 0.5
    audio.save(str(tmp_path / "s.wav"), stereo, 44100)
    mono = read_audio(tmp_path / "s.wav")
    assert mono.shape == (16000,) and mono.dtype == np.float32
    assert np.argmax(np.abs(np.fft.rfft(mono))) == 500 and 0.2 < np.abs(mono).max() < 0.3


def test_committed_clips_match_their_asset_manifest():
    import hashlib
    from pathlib import Path

    import soundfile
    import yaml

    data = Path(__file__).parent / "data"
    asset = yaml.safe_load((data / "speech-test-clips.asset.yaml").read_text())["assets"][0]
    listed = {entry["path"]: entry["sha256"] for entry in asset["files"]}
    utts = read_manifest(data / "manifest.jsonl")
    assert len(utts) == 10 and {u.feat.relative_to(data.resolve()).as_posix() for u in utts} <= set(listed)
    for path, digest in listed.items():
        assert hashlib.sha256((data / path).read_bytes()).hexdigest() == digest, path
    for utt in utts:
        info = soundfile.info(str(utt.feat))
        assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")
    vocab = Vocabulary.load(data / "vocab.txt")
    assert all(vocab.unk_id not in vocab.encode(u.text) for u in utts)
