"""The handwritten digits that scikit-learn ships (UCI optdigits, 1797 8x8 images): real data, no download.

Items are what an image file would give, a grey uint8 image (8x8, 0-255) and an int64 label, so
the same transforms serve training, evaluation and prediction from files. The train/test split
is a fixed permutation of its own seed, independent of ``paddle.seed``, so every run evaluates
on the same held-out images.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..io.dataset import Dataset

CLASSES = [str(i) for i in range(10)]


def _load() -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ConfigError(
            "the Digits dataset comes from scikit-learn, which is not installed; "
            "pip install 'paddlectl-framework[vision]'"
        ) from None
    digits = load_digits()
    images = np.round(digits.images * (255.0 / 16.0)).astype(np.uint8)
    return images, digits.target.astype("int64")


class Digits(Dataset):
    """``split='train'`` or ``'test'`` of the 1797 digits; ``test_fraction`` of them are held out."""

    classes = CLASSES

    def __init__(self, split: str = "train", test_fraction: float = 0.2, split_seed: int = 0, transform=None) -> None:
        if split not in ("train", "test"):
            raise ConfigError(f"Digits: split must be 'train' or 'test', got {split!r}")
        if not 0.0 < float(test_fraction) < 1.0:
            raise ConfigError(f"Digits: test_fraction must be between 0 and 1, got {test_fraction!r}")
        images, labels = _load()
        order = np.random.default_rng(int(split_seed)).permutation(len(labels))
        n_test = int(round(len(labels) * float(test_fraction)))
        chosen = order[:n_test] if split == "test" else order[n_test:]
        self.images, self.labels = images[chosen], labels[chosen]
        self.transform = transform

    def __getitem__(self, idx):
        image = self.images[idx]
        if self.transform is not None:
            image = self.transform(image)
        return image, np.array([self.labels[idx]], dtype="int64")

    def __len__(self) -> int:
        return len(self.labels)
