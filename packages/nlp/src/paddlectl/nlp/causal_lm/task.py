"""``nlp.causal_lm``: a GPT-style character model of People's Daily 1998, trained, exported (symbolic
batch and sequence length), evaluated (perplexity, next-character accuracy) and served through
``paddlectl train / export / eval / predict``. See ``configs/causal_lm*.yml``.

Sections besides the trainer's ``Global`` and the framework's ``Optimizer``::

    Architecture: {name: GPTLMHeadModel, hidden_size, num_hidden_layers, num_attention_heads, ...}
    Train:        {dataset: {name: PeoplesDaily, root, held_out, split_seed, min_freq, seq_len, max_windows},
                   loader: {batch_size, shuffle, drop_last, num_workers}}
    Eval:         {dataset: {seq_len, max_windows}, loader: {...}}   # the held-out sentences
    Metric:       {main_indicator: acc}
    PostProcess:  {topk, max_length, decode_strategy, top_k, top_p, temperature, seed, stop_at_newline}

``Train.dataset`` names the corpus and its split once: the evaluation windows come from the
sentences it holds out, and the vocabulary from the ones it keeps, so the model's size, the data
and the exported pre/post-processing cannot disagree; export stores the characters in the model.
A served request is a prompt (text, or a UTF-8 file); ``predict`` gives the next character's
distribution from one run, ``serving.generate_served`` continues the prompt with the predictor.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import check_keys, require_mapping
from paddlectl.framework.hapi.task import TaskBase
from paddlectl.framework.static.input_spec import InputSpec

from ..gpt import GPTConfig, GPTLMHeadModel
from ..text_cls.vocab import CharTable
from .data import TextWindows, corpus_texts, corpus_vocab
from .metric import Perplexity

ARCH_KEYS = ("name", *(f.name for f in dataclasses.fields(GPTConfig) if f.name != "vocab_size"))
WINDOW_KEYS = ("seq_len", "max_windows")
CORPUS_KEYS = ("name", "root", "held_out", "split_seed", "min_freq", *WINDOW_KEYS)
SPLIT_KEYS = ("dataset", "loader")
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")
GENERATION_DEFAULTS = {
    "topk": 5,
    "max_length": 50,
    "decode_strategy": "greedy_search",
    "top_k": 0,
    "top_p": 1.0,
    "temperature": 1.0,
    "seed": None,
    "stop_at_newline": True,
}
METRICS = ("acc", "ppl")


def read_prompt(raw: Any) -> str:
    """A prompt as text: a ``str`` is the prompt itself; a path (``Path``, as ``paddlectl predict``
    passes files) is read as UTF-8, its final line break dropped (an editor's, not a sentence end)."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, os.PathLike):
        raise DataError(f"a prompt is text or a text file, got {type(raw).__name__}")
    try:
        text = Path(raw).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read prompt file {str(raw)!r} ({exc}); it must be UTF-8 text") from None
    return text.removesuffix("\n").removesuffix("\r")


def encode_prompt(vocab: CharTable, text: str, positions: int) -> tuple[np.ndarray, list[str]]:
    """``(ids, characters mapped to [UNK])``; an empty prompt or one longer than ``positions`` is a DataError."""
    if not text:
        raise DataError("the prompt is empty; give at least one character to continue from")
    if len(text) > positions:
        raise DataError(
            f"the prompt has {len(text)} characters, the model attends over {positions}; shorten it to at most "
            f"{positions}"
        )
    return vocab.encode(text, len(text)), sorted({c for c in text if c not in vocab.ids})


class CausalLMTask(TaskBase):
    name = "nlp.causal_lm"

    # ----- config -----------------------------------------------------------------------
    def check_config(self, config: dict) -> None:
        check_keys(config.get("Architecture") or {}, "Architecture", ARCH_KEYS)
        for split in ("Train", "Eval"):
            section = config.get(split)
            if not section:
                raise ConfigError(f"config section {split!r} is missing; e.g. {split}: {{dataset: {{seq_len: 64}}}}")
            check_keys(section, split, SPLIT_KEYS + (("harness",) if split == "Eval" else ()))
            check_keys(
                self._dataset_section(config, split),
                f"{split}.dataset",
                CORPUS_KEYS if split == "Train" else WINDOW_KEYS,
            )
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
        check_keys(config.get("Metric") or {}, "Metric", ("main_indicator",))
        check_keys(config.get("Loss") or {}, "Loss", ("name",))
        if (config.get("Loss") or {}).get("name", "CrossEntropyLoss") != "CrossEntropyLoss":
            raise ConfigError(f"Loss.name is {config['Loss']['name']!r}; the causal LM trains with CrossEntropyLoss")
        main = self.main_indicator(config)
        if main == "ppl":
            raise ConfigError(
                "Metric.main_indicator ppl: the trainer keeps the checkpoint with the highest value and lower "
                "perplexity is better; use acc (ppl is reported beside it)"
            )
        if main not in METRICS:
            raise ConfigError(f"Metric.main_indicator {main!r} is not a metric name; choose acc")
        self.postprocess_settings(config)
        model_config = self.model_config(config)
        for split in ("Train", "Eval"):
            seq_len = self._dataset_section(config, split).get("seq_len", 64)
            if isinstance(seq_len, int) and seq_len > model_config.max_position_embeddings:
                raise ConfigError(
                    f"{split}.dataset.seq_len {seq_len} exceeds Architecture.max_position_embeddings "
                    f"{model_config.max_position_embeddings}; lower it or raise the positions"
                )

    def main_indicator(self, config: dict) -> str:
        return str((config.get("Metric") or {}).get("main_indicator") or "acc")

    @staticmethod
    def _dataset_section(config: dict, split: str) -> dict:
        section = (config.get(split) or {}).get("dataset") or {}
        require_mapping(section, f"{split}.dataset")
        return section

    def postprocess_settings(self, config: dict) -> dict:
        section = config.get("PostProcess") or {}
        check_keys(section, "PostProcess", GENERATION_DEFAULTS)
        return {**GENERATION_DEFAULTS, **section}

    def corpus(self, config: dict) -> tuple[str | None, float, int]:
        """``(root, held_out, split_seed)`` of ``Train.dataset``, checked: the key of the cached text."""
        section = self._dataset_section(config, "Train")
        if section.get("name", "PeoplesDaily") != "PeoplesDaily":
            raise ConfigError(f"Train.dataset.name is {section['name']!r}; choose PeoplesDaily")
        root = section.get("root")
        held_out, split_seed = section.get("held_out", 0.05), section.get("split_seed", 0)
        if not isinstance(held_out, float) or isinstance(split_seed, bool) or not isinstance(split_seed, int):
            raise ConfigError(
                f"Train.dataset.held_out must be a fraction and split_seed an integer, got {held_out!r} and "
                f"{split_seed!r}"
            )
        return (None if root is None else str(root), held_out, split_seed)

    def vocab(self, config: dict) -> CharTable:
        return corpus_vocab(*self.corpus(config), self._dataset_section(config, "Train").get("min_freq", 3))

    def model_config(self, config: dict, vocab_size: int | None = None) -> GPTConfig:
        arch = dict(config.get("Architecture") or {})
        if arch.pop("name", "GPTLMHeadModel") != "GPTLMHeadModel":
            raise ConfigError(f"Architecture.name is {config['Architecture']['name']!r}; choose GPTLMHeadModel")
        try:
            return GPTConfig(vocab_size=vocab_size or 1, **arch)
        except TypeError as exc:
            raise ConfigError(f"Architecture: {exc}") from None

    # ----- training ---------------------------------------------------------------------
    def build_model(self, config: dict):
        return GPTLMHeadModel(self.model_config(config, len(self.vocab(config))))

    def _windows(self, config: dict, split: str) -> TextWindows:
        section = self._dataset_section(config, split)
        text = corpus_texts(*self.corpus(config))[0 if split == "Train" else 1]
        return TextWindows(text, self.vocab(config), section.get("seq_len", 64), section.get("max_windows"))

    def build_datasets(self, config: dict):
        return self._windows(config, "Train"), self._windows(config, "Eval")

    def build_loader_options(self, config: dict, split: str) -> dict:
        section = config["Train" if split == "train" else "Eval"]
        options = {"batch_size": 32, "shuffle": split == "train", "drop_last": split == "train", "num_workers": 0}
        options.update(section.get("loader") or {})
        return options

    def build_loss(self, config: dict):
        return nn.CrossEntropyLoss()

    def build_metrics(self, config: dict) -> list:
        return [Perplexity()]

    # ----- export and serving -----------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        return [InputSpec([None, None], "int64", "input_ids")]

    def preprocess_config(self, config: dict) -> dict:
        positions = self.model_config(config).max_position_embeddings
        return {"task": self.name, "vocab": self.vocab(config).tokens, "max_position_embeddings": positions}

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "vocab": self.vocab(config).tokens, **self.postprocess_settings(config)}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        vocab = CharTable(pre["vocab"])
        ids = [encode_prompt(vocab, read_prompt(raw), int(pre["max_position_embeddings"]))[0] for raw in raw_inputs]
        lengths = sorted({len(i) for i in ids})
        if len(lengths) > 1:
            raise DataError(
                f"the prompts of one batch must be equally long, got {lengths[0]} to {lengths[-1]} characters; "
                "predict them one at a time (--batch-size 1)"
            )
        return [np.stack(ids)]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """The next character after each prompt: the most probable one and the top ``topk``."""
        vocab = CharTable(post["vocab"])
        logits = np.asarray(outputs[0], dtype=np.float64)
        if logits.ndim != 3 or logits.shape[-1] != len(vocab):
            raise DataError(
                f"the model gives logits {list(logits.shape)}, its vocabulary has {len(vocab)} tokens; export the "
                "model with the corpus settings it was trained with"
            )
        last = logits[:, -1]
        probs = np.exp(last - last.max(axis=-1, keepdims=True))
        probs /= probs.sum(axis=-1, keepdims=True)
        predictions = []
        for row in probs:
            order = np.argsort(-row, kind="stable")[: int(post["topk"])]
            top = [{"label": vocab.tokens[i], "id": int(i), "score": float(row[i])} for i in order]
            predictions.append({**top[0], "topk": top})
        return predictions

    def eval_samples(self, config: dict):
        """Each held-out window as its text (what serving is given) and its next-character ids."""
        windows = self._windows(config, "Eval")
        for i in range(len(windows)):
            yield windows.raw(i)


__all__ = ["CausalLMTask", "encode_prompt", "read_prompt"]
