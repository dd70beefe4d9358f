"""Hugging Face BERT/ERNIE safetensors checkpoints into ``BertModel``, through an explicit name map.

transformers names a BERT's weights ``encoder.layer.3.attention.self.query.weight`` and stores a
Linear as [out, in]; ``BertModel`` follows PaddleNLP (``encoder.layers.3.self_attn.q_proj.weight``,
[in, out]). ``hf_name_map`` spells out every pair, so a checkpoint whose keys are not exactly the
map's (a missing layer, a head, another architecture) is refused naming the keys and the mapping
tried, instead of leaving randomly initialised weights behind. Files are read with ``safetensors``
only: no pickle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open

from paddlectl.framework.errors import CheckpointError, DataError

from .encoder import BertConfig, BertModel
from .tokenizer import AutoTokenizer, Tokenizer

__all__ = ["MAPPING_NAME", "hf_name_map", "load_hf_state", "load_pretrained", "check_vocab"]

MAPPING_NAME = "hf-bert -> paddlectl (Linear weights transposed to [in, out])"
_PREFIXES = ("bert.", "ernie.")  # BertFor*/ErnieFor* checkpoints keep the encoder under one of these
_BUFFERS = ("embeddings.position_ids",)  # a non-weight buffer older transformers versions saved
_MODEL_TYPES = ("bert", "ernie")
_FLOATS = ("float32", "float16", "float64")
_LAYER = {  # per encoder layer: transformers' suffix -> (ours, transposed)
    "attention.self.query": ("self_attn.q_proj", True),
    "attention.self.key": ("self_attn.k_proj", True),
    "attention.self.value": ("self_attn.v_proj", True),
    "attention.output.dense": ("self_attn.out_proj", True),
    "attention.output.LayerNorm": ("norm1", False),
    "intermediate.dense": ("linear1", True),
    "output.dense": ("linear2", True),
    "output.LayerNorm": ("norm2", False),
}


@dataclass(frozen=True)
class Target:
    name: str  # BertModel's parameter
    transpose: bool  # a Linear weight: [out, in] in the file, [in, out] here


def hf_name_map(config: BertConfig) -> dict[str, Target]:
    """Every transformers ``BertModel`` weight name of ``config``'s architecture -> its ``BertModel`` parameter."""
    pairs = {
        "embeddings.word_embeddings": ("embeddings.word_embeddings", False),
        "embeddings.position_embeddings": ("embeddings.position_embeddings", False),
        "embeddings.token_type_embeddings": ("embeddings.token_type_embeddings", False),
        "embeddings.LayerNorm": ("embeddings.layer_norm", False),
        "pooler.dense": ("pooler.dense", True),
    }
    for i in range(config.num_hidden_layers):
        for theirs, (ours, transposed) in _LAYER.items():
            pairs[f"encoder.layer.{i}.{theirs}"] = (f"encoder.layers.{i}.{ours}", transposed)
    out = {}
    for theirs, (ours, transposed) in pairs.items():
        is_table = theirs.endswith("_embeddings")
        out[f"{theirs}.weight"] = Target(f"{ours}.weight", transposed)
        if not is_table:
            out[f"{theirs}.bias"] = Target(f"{ours}.bias", False)
    return out


def _renamed_layer_norm(name: str) -> str:
    """TF-era checkpoints call LayerNorm's weight/bias gamma/beta."""
    return name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    try:
        with safe_open(str(path), framework="numpy") as f:
            tensors = {key: f.get_tensor(key) for key in f.keys()}
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file (a checkpoint needs model.safetensors)") from None
    except (SafetensorError, OSError, TypeError, ValueError) as exc:  # bf16 has no NumPy dtype: TypeError
        raise CheckpointError(f"{path}: not a readable safetensors file ({exc})") from None
    return tensors


def load_hf_state(path, config: BertConfig) -> dict[str, np.ndarray]:
    """``BertModel``'s state dict from a transformers BERT safetensors file, float32, checked key by key."""
    path = Path(path)
    raw = {_renamed_layer_norm(k): v for k, v in _read_safetensors(path).items()}
    for prefix in _PREFIXES:
        if any(k.startswith(prefix) for k in raw):
            raw = {k.removeprefix(prefix): v for k, v in raw.items()}
            break
    mapping = hf_name_map(config)
    missing = sorted(k for k in mapping if k not in raw)
    unexpected = sorted(k for k in raw if k not in mapping and k not in _BUFFERS)
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: keys do not match a {config.num_hidden_layers}-layer BERT "
            f"(mapping tried: {MAPPING_NAME}, prefixes {list(_PREFIXES)} stripped): "
            f"missing {_some(missing)}, unexpected {_some(unexpected)}"
        )
    state = {}
    for theirs, target in mapping.items():
        array = raw[theirs]
        if array.dtype.name not in _FLOATS:
            raise CheckpointError(f"{path}: {theirs!r} is {array.dtype.name}, expected a float tensor")
        state[target.name] = np.ascontiguousarray(array.T if target.transpose else array, dtype=np.float32)
    return state


def _some(keys: list[str], shown: int = 6) -> str:
    if not keys:
        return "none"
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return "[" + ", ".join(keys[:shown]) + "]" + more


def check_vocab(tokenizer: Tokenizer, config: BertConfig, where: str = "") -> None:
    """The tokenizer's ids index the word embeddings: a different vocabulary size means another
    model's tokenizer (its ids would be other words, or fall off the table)."""
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(
            f"{where or 'checkpoint'}: the tokenizer has {tokenizer.vocab_size} tokens but the word "
            f"embeddings have {config.vocab_size} rows; the tokenizer belongs to another model"
        )


def load_pretrained(directory) -> tuple[BertModel, Tokenizer]:
    """(model in eval mode, tokenizer) from a transformers BERT/ERNIE directory: ``config.json``,
    ``model.safetensors`` and ``tokenizer.json`` or ``vocab.txt``."""
    root = Path(directory)
    if not root.is_dir():
        raise DataError(f"{root} is not a directory (expected a checkpoint with config.json and model.safetensors)")
    config_path = root / "config.json"
    config = BertConfig.from_json(config_path)
    if config.model_type not in _MODEL_TYPES:
        raise CheckpointError(f"{config_path}: model_type {config.model_type!r} is not one of {list(_MODEL_TYPES)}")
    state = load_hf_state(root / "model.safetensors", config)
    words = state["embeddings.word_embeddings.weight"].shape[0]
    if words != config.vocab_size:
        raise CheckpointError(
            f"{root}: config.json says vocab_size {config.vocab_size} but the word embeddings have {words} rows"
        )
    tokenizer = AutoTokenizer.from_pretrained(root)
    check_vocab(tokenizer, config, str(root))
    model = BertModel(config)
    try:
        model.set_state_dict(state)
    except ValueError as exc:  # the framework's ShapeError: one key's shape differs from the config's
        raise CheckpointError(f"{root}: {exc} (mapping tried: {MAPPING_NAME})") from None
    model.eval()
    return model, tokenizer
