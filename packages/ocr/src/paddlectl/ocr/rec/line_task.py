"""What the two text-line tasks (``ocr.rec``, ``ocr.cls``) share: a fixed [3, H, W] input made by
the resize operator in ``Eval.dataset.transforms``, which export records (shape, mean/std,
colour order) so any server prepares lines as training did."""

from __future__ import annotations

from paddlectl.framework.errors import ConfigError
from paddlectl.framework.static.input_spec import InputSpec

from ..task_base import OcrTaskBase, operator_items
from .resize import MEAN, STD, check_image_shape


class LineTask(OcrTaskBase):
    RESIZE_OP = ""  # the resize operator whose image_shape is the model's input

    def image_shape(self, config: dict, split: str = "Eval") -> list[int]:
        steps = dict(operator_items(config[split]["dataset"].get("transforms"), f"{split}.dataset.transforms"))
        if self.RESIZE_OP not in steps:
            raise ConfigError(
                f"{split}.dataset.transforms has no {self.RESIZE_OP}; it sets the model's input size, add "
                f"{{{self.RESIZE_OP}: {{image_shape: [3, H, W]}}}}"
            )
        default = self.DATA_OPS[self.RESIZE_OP]().image_shape
        return check_image_shape(steps[self.RESIZE_OP].get("image_shape", default), self.RESIZE_OP)

    def img_mode(self, config: dict) -> str:
        steps = dict(operator_items(config["Eval"]["dataset"].get("transforms"), "Eval.dataset.transforms"))
        return (steps.get("DecodeImage") or {}).get("img_mode", "BGR")

    def input_spec(self, config: dict) -> list:
        return [InputSpec([None, *self.image_shape(config)], "float32", "x")]

    def preprocess_config(self, config: dict) -> dict:
        return {
            **super().preprocess_config(config),
            "image_shape": self.image_shape(config),
            "img_mode": self.img_mode(config),
            "scale": 1 / 255,
            "mean": list(MEAN),
            "std": list(STD),
            "resize": "keep_ratio_pad_right",  # resize_norm_img: height H, width <= W, zeros to the right
        }
