"""``paddle.vision``: reference models, image transforms and dataset readers (nothing is downloaded)."""

from . import datasets, models, transforms
