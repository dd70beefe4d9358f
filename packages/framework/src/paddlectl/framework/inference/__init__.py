"""``paddle.inference``: Config, create_predictor and Predictor over a saved model directory."""

from .config import Config
from .predictor import Predictor, Tensor, create_predictor

__all__ = ["Config", "Predictor", "Tensor", "create_predictor"]
