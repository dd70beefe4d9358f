"""``ocr.rec``: text-line recognition, CRNN (MobileNetV3 + BiLSTM + CTC) or SVTR (+ CTC), trained and
served through ``paddlectl train / export / eval / predict``. See ``configs/rec_*.yml``.

The dictionary lives in ``PostProcess`` (``CTCLabelDecode: character_dict_path, use_space_char``;
PaddleOCR keeps it in ``Global``, which is the framework trainer's here): the label encoder, the
head's class count, the metric and the exported post-processing all read it from there, so they
cannot disagree. Export stores the dictionary's characters in the model, not the file's path.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import check_keys, instantiate, require_mapping, resolve

from ..task_base import OcrTaskBase
from .batching import SAMPLERS, pad_to_widest, resized_widths
from .labels import CTCLabelDecode, CTCLabelEncode, probabilities
from .line_task import LineTask
from .loss import CTCLoss
from .metric import CTCRecMetric
from .mobilenet_v3 import MobileNetV3
from .resize import RecResizeImg
from .sequence import CTCHead, SequenceEncoder
from .svtr import SVTRNet

POSTPROCESS_KEYS = ("name", "character_dict_path", "use_space_char", "beam_width")


class RecTask(LineTask):
    name = "ocr.rec"
    model_type = "rec"
    BACKBONES = {"MobileNetV3": MobileNetV3, "SVTRNet": SVTRNet}
    NECKS = {"SequenceEncoder": SequenceEncoder}
    HEADS = {"CTCHead": CTCHead}
    LOSSES = {"CTCLoss": CTCLoss}
    METRICS = {"RecMetric": CTCRecMetric}
    DATA_OPS = {**OcrTaskBase.DATA_OPS, "CTCLabelEncode": CTCLabelEncode, "RecResizeImg": RecResizeImg}
    LABEL_OPS = ("CTCLabelEncode",)
    RESIZE_OP = "RecResizeImg"
    SAMPLERS = SAMPLERS
    FIXED_WIDTH_BACKBONES = ("SVTRNet",)  # a position embedding per column: the width cannot vary

    def decoder(self, config: dict) -> CTCLabelDecode:
        section = config.get("PostProcess") or {"name": "CTCLabelDecode"}
        check_keys(section, "PostProcess", POSTPROCESS_KEYS)
        return instantiate(section, {"CTCLabelDecode": CTCLabelDecode}, "PostProcess")

    def op_context(self, config: dict) -> dict:
        section = config.get("PostProcess") or {}
        return {k: section[k] for k in ("character_dict_path", "use_space_char") if k in section}

    def head_kwargs(self, config: dict) -> dict:
        return {"out_channels": len(self.decoder(config).classes)}

    def metric_kwargs(self, config: dict) -> dict:
        return {"decoder": self.decoder(config)}

    def check_label(self, label: str) -> None:
        if not label.strip():
            raise ValueError("the transcription is empty; remove the line or write the line's text")

    def check_config(self, config: dict) -> None:
        self.decoder(config)
        self.image_shape(config)
        super().check_config(config)
        if self.sampler_section(config) is not None:
            self.image_shape(config, "Train")
            backbone = ((config.get("Architecture") or {}).get("Backbone") or {}).get("name")
            if backbone in self.FIXED_WIDTH_BACKBONES:
                raise ConfigError(
                    f"Train.sampler batches lines at their own width, which {backbone} cannot take (its position "
                    "embedding fixes the width); remove Train.sampler"
                )

    def sampler_section(self, config: dict) -> dict | None:
        section = config["Train"].get("sampler")
        if section is not None:
            require_mapping(section, "Train.sampler")
            resolve(section.get("name"), self.SAMPLERS, "Train.sampler")
        return section

    def train_batch_sampler(self, config: dict, dataset, options: dict):
        """Without ``Train.sampler`` random batches at the fixed width; with it, batches of lines of
        similar width (``rec.batching``)."""
        section = self.sampler_section(config)
        if section is None:
            return super().train_batch_sampler(config, dataset, options)
        widths = resized_widths(dataset, self.image_shape(config, "Train"))
        keys = {k: options[k] for k in ("batch_size", "drop_last", "shuffle")}
        return instantiate(section, self.SAMPLERS, "Train.sampler", widths=widths, **keys)

    def train_collate_fn(self, config: dict):
        return pad_to_widest if self.sampler_section(config) is not None else None

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "name": "CTCLabelDecode", "outputs": "logits", **self.decoder(config).config()}

    def postprocess(self, post: dict, outputs) -> list[dict]:
        decoder = CTCLabelDecode.from_classes(post["character"], post["use_space_char"], int(post.get("beam_width", 1)))
        logits = np.asarray(outputs[0])
        if logits.ndim != 3 or logits.shape[-1] != len(decoder.classes):
            raise DataError(
                f"the recogniser gives {logits.shape[-1] if logits.ndim else '?'} classes per step, its dictionary "
                f"has {len(decoder.classes)} (blank + {len(decoder.characters)} characters"
                f"{' + space' if decoder.use_space_char else ''}); export the model with the dictionary it was "
                "trained with"
            )
        return [{"label": text, "score": score} for text, score in decoder(probabilities(logits))]
