"""``speech.asr``: CTC speech recognition (DeepSpeech2 or Conformer) trained and served through
``paddlectl train / export / eval / predict``. See ``configs/*.yml``.

The model takes raw 16 kHz audio (its log-mel front-end is inside it), so export needs no feature
code at serving time. Training batches are fixed windows of ``max_seconds`` (silence after each
clip; the trainer stacks batches and its evaluation concatenates them). The vocabulary lives in
``PostProcess.vocab``: the label encoder, the head's size, the metric and the exported decoder all
read it there. Export stores the classes, and a word list and word n-gram counted from the training
transcripts, in the model, so a served model decodes with nothing but its directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from paddlectl.framework import audio, no_grad, to_tensor
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import build_optimizer, check_keys, instantiate, require_mapping
from paddlectl.framework.hapi.task import TaskBase
from paddlectl.framework.io import Dataset
from paddlectl.framework.static import InputSpec

from .audio import read_audio
from .augment import add_noise, high_shelf, reverberate, speed_perturb, tilt
from .decode import Decoder, WordNgram
from .errors import VocabularyError
from .manifest import read_manifest
from .metrics import AsrMetric
from .models import ENCODERS, SAMPLE_RATE, AsrModel, Frontend
from .models.loss import CTCLoss
from .vocab import BLANK, EOS, SPACE, UNK, Vocabulary

ARCHITECTURE_KEYS = ("Frontend", "Encoder")
SPLIT_KEYS = ("dataset", "loader")
DATASET_KEYS = ("manifest", "max_seconds", "max_label_length", "augment", "cache_features")
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")
POSTPROCESS_KEYS = ("vocab", "beam_width", "word_list", "lm_order", "lm_weight", "word_bonus")
MAX_SERVE_SECONDS = 120.0
"""The longest recording served in one pass (attention over 3,000 encoder frames)."""


def read_clip(path, max_seconds: float = MAX_SERVE_SECONDS) -> np.ndarray:
    """A recording as 16 kHz mono float32 (``read_audio``), refused before decoding when it is longer
    than ``max_seconds``."""
    found = audio.info(path)
    seconds = found.num_samples / max(found.sample_rate, 1)
    if seconds > max_seconds:
        raise DataError(
            f"audio file {os.fspath(path)!r} is {seconds:.0f} s long; the recogniser takes at most {max_seconds:.0f} s "
            "per file: split it (e.g. sox IN.wav OUT.wav trim 0 60 : newfile : restart)"
        )
    return read_audio(path)


def decoding_classes(vocab: Vocabulary) -> list[str]:
    """What each token writes when decoded: ``<space>`` a space, the other specials nothing."""
    if vocab.unit != "char":
        raise VocabularyError("speech.asr decodes characters; give a char vocabulary (<space> between words)")
    return [" " if t == SPACE else "" if t in (BLANK, UNK, EOS) else t for t in vocab.tokens]


class WaveAugment:
    """Training-time waveform augmentation (``Train.dataset.augment``): speed perturbation, then
    reverberation with probability ``reverb_prob`` (reverberation time drawn from ``rt60``), then
    additive white, pink or brown noise with probability ``noise_prob``, then a microphone's spectral
    tilt with probability ``tilt_prob`` (slope drawn from ``tilt_db_per_octave``), then a band-limited
    microphone's high shelf with probability ``shelf_prob`` (``shelf_drop_db`` weaker above a corner
    drawn from ``shelf_corner_hz``); draws come from NumPy's global stream, which the trainer seeds
    and checkpoints."""

    def __init__(
        self,
        speeds: Sequence[float] = (0.9, 1.0, 1.1),
        snr_db: Sequence[float] = (10.0, 30.0),
        noise_prob: float = 0.5,
        reverb_prob: float = 0.0,
        rt60: Sequence[float] = (0.1, 0.5),
        tilt_prob: float = 0.0,
        tilt_db_per_octave: Sequence[float] = (-6.0, 3.0),
        shelf_prob: float = 0.0,
        shelf_drop_db: Sequence[float] = (10.0, 35.0),
        shelf_corner_hz: Sequence[float] = (2500.0, 5000.0),
    ):
        ranges = (snr_db, rt60, tilt_db_per_octave, shelf_drop_db, shelf_corner_hz)
        probabilities = (noise_prob, reverb_prob, tilt_prob, shelf_prob)
        if any(len(r) != 2 for r in ranges) or not all(0.0 <= p <= 1.0 for p in probabilities):
            raise ConfigError(
                "augment: snr_db, rt60, tilt_db_per_octave, shelf_drop_db and shelf_corner_hz must be [low, high], "
                "noise_prob, reverb_prob, tilt_prob and shelf_prob in [0, 1]; got "
                + ", ".join(repr(v) for v in (*ranges, *probabilities))
            )
        self.speeds = [float(s) for s in speeds]
        self.snr_db, self.rt60 = (float(snr_db[0]), float(snr_db[1])), (float(rt60[0]), float(rt60[1]))
        self.noise_prob, self.reverb_prob = noise_prob, reverb_prob
        self.tilt_prob, self.tilt_db_per_octave = (
            tilt_prob,
            (float(tilt_db_per_octave[0]), float(tilt_db_per_octave[1])),
        )
        self.shelf_prob = shelf_prob
        self.shelf_drop_db = (float(shelf_drop_db[0]), float(shelf_drop_db[1]))
        self.shelf_corner_hz = (float(shelf_corner_hz[0]), float(shelf_corner_hz[1]))

    def __call__(self, wave: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(np.random.randint(2**31))
        wave = speed_perturb(wave, rng, self.speeds)
        if self.reverb_prob and rng.random() < self.reverb_prob:
            wave = reverberate(wave, rng, self.rt60)
        if rng.random() < self.noise_prob:
            wave = add_noise(wave, rng, self.snr_db, kind=str(rng.choice(["white", "pink", "brown"])))
        if self.tilt_prob and rng.random() < self.tilt_prob:
            wave = tilt(wave, rng, self.tilt_db_per_octave)
        if self.shelf_prob and rng.random() < self.shelf_prob:
            wave = high_shelf(wave, rng, self.shelf_drop_db, self.shelf_corner_hz)
        return wave


class SpeechDataset(Dataset):
    """``(audio [max_seconds * 16000] float32, label [max_label_length] int32)`` per manifest line:
    the clip followed by silence, the transcript's token ids followed by blanks (0).

    Clips longer than ``max_seconds`` are left out, as PaddleSpeech's ``max_input_len`` filters
    them (``dropped`` counts them; a set left empty is an error). An augmented clip that no longer
    fits its window is used unaugmented, so no label loses its last word. With ``log_mel`` (the
    front-end's untrained first half) items are its features, computed once per clip and kept: on
    2 cores the front-end is most of a small model's step.
    """

    def __init__(
        self,
        manifest: str,
        vocab: Vocabulary,
        max_seconds: float = 5.0,
        max_label_length: int = 48,
        augment=None,
        log_mel=None,
    ):
        if not max_seconds > 0 or not isinstance(max_label_length, int) or max_label_length < 1:
            raise ConfigError(
                f"dataset max_seconds must be > 0 and max_label_length a positive integer, got {max_seconds!r}, "
                f"{max_label_length!r}"
            )
        self.vocab, self.samples = vocab, int(round(float(max_seconds) * SAMPLE_RATE))
        self.max_label_length, self.augment = max_label_length, augment
        if augment is not None and log_mel is not None:
            raise ConfigError(
                "dataset: cache_features keeps one rendering per clip, so it cannot take augment; drop one"
            )
        self.log_mel, self.cache = log_mel, {}
        records = read_manifest(manifest)
        self.records = [r for r in records if r.duration <= max_seconds]
        self.dropped = len(records) - len(self.records)
        if not self.records:
            raise DataError(f"manifest {manifest!r}: every clip is longer than max_seconds {max_seconds}; raise it")
        self.labels = []
        for record in self.records:
            ids = vocab.encode(record.text)
            if not ids or len(ids) > max_label_length:
                raise DataError(
                    f"manifest {manifest!r}, utterance {record.utt!r}: the transcript {record.text!r} has {len(ids)} "
                    f"tokens; it needs 1 to {max_label_length} (raise max_label_length or drop the line)"
                )
            self.labels.append(np.array(ids + [0] * (max_label_length - len(ids)), dtype="int32"))

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index: int):
        if self.log_mel is not None:
            if index not in self.cache:
                with no_grad():
                    self.cache[index] = self.log_mel(to_tensor(self.window(index)[None])).numpy()[0]
            return self.cache[index], self.labels[index]
        return self.window(index), self.labels[index]

    def window(self, index: int) -> np.ndarray:
        """Clip ``index`` (augmented when training asks) followed by silence to the window's length."""
        audio = read_audio(self.records[index].feat)
        if self.augment is not None:
            augmented = self.augment(audio)
            audio = augmented if len(augmented) <= self.samples else audio
        window = np.zeros(self.samples, dtype="float32")
        clip = audio[: self.samples]
        window[: len(clip)] = clip
        return window


class AsrTask(TaskBase):
    name = "speech.asr"

    # ----- config -----------------------------------------------------------------------
    def vocab(self, config: dict) -> Vocabulary:
        section = config.get("PostProcess") or {}
        require_mapping(section, "PostProcess")
        check_keys(section, "PostProcess", POSTPROCESS_KEYS)
        if "vocab" not in section:
            raise ConfigError(
                "PostProcess.vocab is missing: name the vocabulary file (one token per line, blank first)"
            )
        return Vocabulary.load(section["vocab"])

    def check_config(self, config: dict) -> None:
        arch = config.get("Architecture")
        if not arch:
            raise ConfigError(
                "config needs an Architecture section: {Frontend: {n_mels: 80}, Encoder: {name: Conformer}}"
            )
        check_keys(arch, "Architecture", ARCHITECTURE_KEYS)
        for split in ("Train", "Eval"):
            section = config.get(split)
            if not section or "dataset" not in section:
                raise ConfigError(f"config section {split!r} needs a dataset, e.g. {split}.dataset: {{manifest: PATH}}")
            check_keys(section, split, SPLIT_KEYS + (("harness",) if split == "Eval" else ()))
            check_keys(section["dataset"], f"{split}.dataset", DATASET_KEYS)
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
        check_keys(config.get("Metric") or {}, "Metric", ("name", "main_indicator"))
        self.decoder_settings(config)
        self.build_loss(config)
        self.build_model(config)

    # ----- model, loss, metrics -----------------------------------------------------------
    def build_model(self, config: dict) -> AsrModel:
        arch = config.get("Architecture") or {}
        front_section = dict(arch.get("Frontend") or {})
        require_mapping(front_section, "Architecture.Frontend")
        frontend = instantiate({"name": "Frontend", **front_section}, {"Frontend": Frontend}, "Architecture.Frontend")
        if not arch.get("Encoder"):
            raise ConfigError(f"Architecture.Encoder is missing; choose from {', '.join(sorted(ENCODERS))}")
        encoder = instantiate(arch["Encoder"], ENCODERS, "Architecture.Encoder", in_dim=frontend.n_mels)
        return AsrModel(frontend, encoder, len(self.vocab(config)))

    def build_loss(self, config: dict):
        return instantiate(config.get("Loss") or {"name": "CTCLoss"}, {"CTCLoss": CTCLoss}, "Loss")

    def build_metrics(self, config: dict) -> list:
        section = {k: v for k, v in (config.get("Metric") or {}).items() if k != "main_indicator"}
        metric = {"name": "AsrMetric", **section}
        return [instantiate(metric, {"AsrMetric": AsrMetric}, "Metric", classes=decoding_classes(self.vocab(config)))]

    def build_optimizer(self, config: dict, model, steps_per_epoch: int):
        """The framework's ``Optimizer`` section; a ``OneCycleLR`` without ``total_steps`` spans the run."""
        section = dict(config.get("Optimizer") or {})
        schedule = section.get("lr")
        if isinstance(schedule, dict) and schedule.get("name") == "OneCycleLR" and "total_steps" not in schedule:
            epochs = int((config.get("Global") or {}).get("epochs") or 1)
            section["lr"] = {**schedule, "total_steps": epochs * steps_per_epoch}
        return build_optimizer(section, model.parameters())

    # ----- data -------------------------------------------------------------------------
    def dataset(self, config: dict, split: str) -> SpeechDataset:
        section = dict(config[split]["dataset"])
        if "manifest" not in section:
            raise ConfigError(f"{split}.dataset.manifest is missing: name the JSON-lines manifest")
        augment = section.pop("augment", None)
        if augment is not None and split == "Train":
            augment = instantiate(
                {"name": "WaveAugment", **augment}, {"WaveAugment": WaveAugment}, "Train.dataset.augment"
            )
        elif augment is not None:
            raise ConfigError("Eval.dataset.augment: evaluation data is not augmented; remove it")
        log_mel = self.build_model(config).frontend.log_mel if section.pop("cache_features", False) else None
        return SpeechDataset(vocab=self.vocab(config), augment=augment, log_mel=log_mel, **section)

    def build_datasets(self, config: dict):
        return self.dataset(config, "Train"), self.dataset(config, "Eval")

    def build_loader_options(self, config: dict, split: str) -> dict:
        loader = dict(config["Train" if split == "train" else "Eval"].get("loader") or {})
        return {
            "batch_size": int(loader.get("batch_size", 16)),
            "shuffle": bool(loader.get("shuffle", split == "train")),
            "drop_last": bool(loader.get("drop_last", False)),
            "num_workers": int(loader.get("num_workers", 0)),
        }

    def eval_samples(self, config: dict):
        dataset = self.dataset(config, "Eval")
        for record, label in zip(dataset.records, dataset.labels, strict=True):
            yield str(record.feat), label

    # ----- serving ------------------------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        return [InputSpec([None, None], "float32", "audio")]

    def preprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "sample_rate": SAMPLE_RATE, "max_seconds": MAX_SERVE_SECONDS}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """Files (or 16 kHz mono arrays) -> one [B, S] batch, every clip followed by silence up to a
        whole second (as training windows are): lengths fall in few buckets, so the predictor
        reuses its prepared program instead of preparing one per length."""
        clips = [
            read_clip(raw, float(pre.get("max_seconds", MAX_SERVE_SECONDS)))
            if isinstance(raw, str | os.PathLike)
            else np.asarray(raw, dtype="float32").reshape(-1)
            for raw in raw_inputs
        ]
        longest = max(len(c) for c in clips)
        batch = np.zeros((len(clips), -(-longest // SAMPLE_RATE) * SAMPLE_RATE), dtype="float32")
        for row, clip in zip(batch, clips, strict=True):
            row[: len(clip)] = clip
        return [batch]

    def decoder_settings(self, config: dict) -> dict:
        section = dict(config.get("PostProcess") or {})
        classes = decoding_classes(self.vocab(config))
        beam = section.get("beam_width", 1)
        if not isinstance(beam, int) or beam < 1:
            raise ConfigError(f"PostProcess.beam_width must be a positive integer, got {beam!r}")
        settings = {"classes": classes, "beam_width": beam}
        for key in ("lm_weight", "word_bonus"):
            if key in section:
                settings[key] = float(section[key])
        return settings

    def postprocess_config(self, config: dict) -> dict:
        section = config.get("PostProcess") or {}
        settings = self.decoder_settings(config)
        model = self.build_model(config)
        texts = [r.text for r in read_manifest(config["Train"]["dataset"]["manifest"])]
        if section.get("word_list"):
            settings["words"] = sorted({w for t in texts for w in t.split()})
        if section.get("lm_order"):
            settings["lm"] = WordNgram(texts, order=int(section["lm_order"])).config()
        return {"task": self.name, "frame_seconds": model.frame_seconds, **settings}

    def postprocess(self, post: dict, outputs) -> list[dict]:
        decoder = Decoder(post)
        logits = np.asarray(outputs[0])
        results = []
        for row in logits:
            text, words = decoder(row)
            results.append({"text": text, "words": words})
        return results
