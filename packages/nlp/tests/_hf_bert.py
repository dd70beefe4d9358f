"""A tiny randomly initialised BERT written the way transformers saves one (config.json,
model.safetensors with transformers' names and [out, in] Linear weights, vocab.txt), and a NumPy
forward pass of it written from the BERT paper's equations, independent of paddlectl.nlp."""

from __future__ import annotations

import json
import math

import numpy as np
import safetensors.numpy

CONFIG = {
    "model_type": "bert",
    "architectures": ["BertModel"],
    "vocab_size": 0,  # set from VOCAB
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 32,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 24,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
}
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz", "the", "cat", "sat",
         "on", "mat", "dog", "##s", "##ed", "##ing", ".", ",", "!", "?", "你", "好", "世", "界"]  # fmt: skip


def weights(config: dict, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, f = config["hidden_size"], config["intermediate_size"]

    def normal(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": normal(config["vocab_size"], h),
        "embeddings.position_embeddings.weight": normal(config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": normal(config["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1 + normal(h),
        "embeddings.LayerNorm.bias": normal(h),
        "pooler.dense.weight": normal(h, h),
        "pooler.dense.bias": normal(h),
    }
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            w[p + name + ".weight"], w[p + name + ".bias"] = normal(h, h), normal(h)
        w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"] = normal(f, h), normal(f)
        w[p + "output.dense.weight"], w[p + "output.dense.bias"] = normal(h, f), normal(h)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + name + ".weight"], w[p + name + ".bias"] = 1 + normal(h), normal(h)
    return w


def write(root, seed: int = 0, prefix: str = "", **overrides) -> dict[str, np.ndarray]:
    """The checkpoint directory ``root``; returns the weights as written (without ``prefix``)."""
    root.mkdir(parents=True, exist_ok=True)
    config = {**CONFIG, "vocab_size": len(VOCAB), **overrides}
    (root / "config.json").write_text(json.dumps(config))
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (root / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True, "model_max_length": 24}))
    w = weights(config, seed)
    safetensors.numpy.save_file({prefix + k: v for k, v in w.items()}, str(root / "model.safetensors"))
    return w


def _layer_norm(x, g, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def forward(w: dict, ids: np.ndarray, mask: np.ndarray, heads: int = 4):
    """(every hidden state, pooled) in float64: y = x W^T + b with transformers' [out, in] W."""
    w = {k: v.astype(np.float64) for k, v in w.items()}

    def linear(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    n, length = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][np.arange(length)]
    x = x + w["embeddings.token_type_embeddings.weight"][np.zeros_like(ids)]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    states, layer = [x], 0
    while f"encoder.layer.{layer}.output.dense.weight" in w:
        p = f"encoder.layer.{layer}."
        q, k, v = (linear(x, p + "attention.self." + s).reshape(n, length, heads, -1).transpose(0, 2, 1, 3)
                   for s in ("query", "key", "value"))  # fmt: skip
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]) + np.where(mask, 0.0, -1e9)[:, None, None, :]
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, -1)
        x = _layer_norm(
            x + linear(context, p + "attention.output.dense"),
            *(w[p + "attention.output.LayerNorm." + s] for s in ("weight", "bias")),
        )
        inner = _gelu(linear(x, p + "intermediate.dense"))
        x = _layer_norm(
            x + linear(inner, p + "output.dense"), *(w[p + "output.LayerNorm." + s] for s in ("weight", "bias"))
        )
        states.append(x)
        layer += 1
    pooled = np.tanh(linear(x[:, 0], "pooler.dense"))
    return states, pooled
