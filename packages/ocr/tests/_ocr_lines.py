"""Rendered text-line data sets and tiny ocr.rec / ocr.cls configs for the recogniser tests."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
from PIL import Image

import paddlectl.framework as paddle
from paddlectl.ocr.synthetic import text_line

WORDS = ("abc", "cab", "bad", "dab", "ace", "bead", "face", "fade", "deaf", "cafe", "bed", "fed")
FONTS = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf")


def write_lines(root: Path, n: int = 24, label_file: str = "label.txt") -> Path:
    """``n`` rendered lines (black on white, 22 px, three DejaVu faces) under ``root/img`` with their
    ``img<TAB>text`` label file and the dictionary ``root/dict.txt``; returns the label file."""
    (root / "img").mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        text = WORDS[i % len(WORDS)]
        Image.fromarray(text_line(text, FONTS[i % len(FONTS)], 22, margin=4)).save(root / "img" / f"{i}.png")
        lines.append(f"img/{i}.png\t{text}")
    (root / label_file).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "dict.txt").write_text("".join(f"{c}\n" for c in "abcdef"), encoding="utf-8")
    return root / label_file


def _split(root: Path, label: Path, transforms: list, batch: int) -> dict:
    return {
        "dataset": {
            "name": "SimpleDataSet",
            "data_dir": str(root),
            "label_file_list": [str(label)],
            "transforms": transforms,
        },
        "loader": {"batch_size_per_card": batch, "shuffle": False, "drop_last": False, "num_workers": 0},
    }


def rec_config(root: Path, label: Path, out: Path, backbone: str = "MobileNetV3", width: int = 96) -> dict:
    """A tiny CRNN (MobileNetV3 x0.35 + BiLSTM 16) or SVTR (one block per stage) on 32 x ``width`` lines."""
    if backbone == "MobileNetV3":
        parts = {
            "Backbone": {"name": "MobileNetV3", "model_name": "small", "scale": 0.35, "small_stride": [1, 2, 2, 2]},
            "Neck": {"name": "SequenceEncoder", "encoder_type": "rnn", "hidden_size": 16},
        }
    else:
        parts = {
            "Backbone": {
                "name": "SVTRNet",
                "img_size": [32, width],
                "embed_dim": [16, 32, 48],
                "depth": [1, 1, 1],
                "num_heads": [2, 2, 2],
                "mixer": ["Local", "Local", "Global"],
                "local_mixer": [[3, 5]] * 3,
                "out_channels": 32,
                "out_char_num": width // 8,
                "last_drop": 0.0,
            },  # fmt: skip
            "Neck": {"name": "SequenceEncoder", "encoder_type": "reshape"},
        }
    transforms = [
        {"DecodeImage": {"img_mode": "BGR"}},
        {"CTCLabelEncode": {"max_text_length": 8}},
        {"RecResizeImg": {"image_shape": [3, 32, width]}},
        {"KeepKeys": {"keep_keys": ["image", "label"]}},
    ]
    return {
        "Global": {"task": "ocr.rec", "seed": 3, "output_dir": str(out), "epochs": 1, "log_interval": 1},
        "Architecture": {"model_type": "rec", "algorithm": "CRNN", **parts, "Head": {"name": "CTCHead"}},
        "Loss": {"name": "CTCLoss"},
        "Optimizer": {"name": "Adam", "lr": {"name": "Const", "learning_rate": 0.003}},
        "PostProcess": {
            "name": "CTCLabelDecode",
            "character_dict_path": str(root / "dict.txt"),
            "use_space_char": False,
        },
        "Metric": {"name": "RecMetric", "main_indicator": "acc"},
        "Train": _split(root, label, transforms, 8),
        "Eval": _split(root, label, transforms, 8),
    }


def cls_config(root: Path, label: Path, out: Path) -> dict:
    """A tiny direction classifier (MobileNetV3 x0.35) on the rec lines turned 0/180 degrees."""
    transforms = [
        {"DecodeImage": {"img_mode": "BGR"}},
        {"RotateToLabel": None},
        {"ClsLabelEncode": None},
        {"ClsResizeImg": {"image_shape": [3, 32, 96]}},
        {"KeepKeys": {"keep_keys": ["image", "label"]}},
    ]
    split = _split(root, label, transforms, 8)
    split["dataset"]["name"] = "DirectionDataSet"
    return {
        "Global": {"task": "ocr.cls", "seed": 3, "output_dir": str(out), "epochs": 1, "log_interval": 1},
        "Architecture": {
            "model_type": "cls",
            "algorithm": "CLS",
            "Backbone": {"name": "MobileNetV3", "model_name": "small", "scale": 0.35},
            "Head": {"name": "ClsHead", "class_dim": 2},
        },  # fmt: skip
        "Loss": {"name": "ClsLoss"},
        "Optimizer": {"name": "Adam", "lr": {"name": "Const", "learning_rate": 0.003}},
        "PostProcess": {"name": "ClsPostProcess", "label_list": ["0", "180"]},
        "Metric": {"name": "ClsMetric", "main_indicator": "acc"},
        "Train": split,
        "Eval": copy.deepcopy(split),
    }


def few_step_losses(task, config: dict, steps: int) -> list[float]:
    """The losses of ``steps`` optimizer steps of the task's own model, loss and optimizer on its whole
    (tiny) training set as one batch: what "a few steps lower the loss" tests look at."""
    model, loss_fn = task.build_model(config), task.build_loss(config)
    optimizer, _ = task.build_optimizer(config, model, steps_per_epoch=steps)
    train, _ = task.build_datasets(config)
    images, labels = zip(*(train[i] for i in range(len(train))), strict=True)
    x, y = paddle.to_tensor(np.stack(images)), paddle.to_tensor(np.stack(labels))
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss.item()))
    return losses
