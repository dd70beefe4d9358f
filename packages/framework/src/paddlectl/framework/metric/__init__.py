"""``paddle.metric``: streaming evaluation metrics (Accuracy, Precision, Recall, Auc) and ``accuracy``."""

from .functional import accuracy
from .metrics import Accuracy, Auc, Metric, Precision, Recall

__all__ = ["Accuracy", "Auc", "Metric", "Precision", "Recall", "accuracy"]
