"""``paddle.vision``: reference models, image transforms, dataset readers (nothing is downloaded) and
detection ops."""

from . import datasets, models, ops, transforms
