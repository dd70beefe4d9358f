"""PaddleSeg's ``Dataset``: a file list of ``image_path label_path`` lines under ``dataset_root``.

Every line is checked when the dataset is built (both files exist, the label's values are class
ids or the ignore value, image and label have one size), so a broken set fails with the file and
line named before the first training step rather than as an exception in a loader worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.io import Dataset as _Dataset
from paddlectl.framework.vision.image_io import read_image

from .labels import check_binary_255, check_label_values, label_values, read_label


def read_file_list(path: Path, root: Path, separator: str) -> list[tuple[Path, Path, str]]:
    """``(image, label, "file:line")`` per non-empty line; both files must exist."""
    if not path.is_file():
        raise DataError(f"file list {str(path)!r} does not exist; check dataset_root and train_path/val_path")
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"file list {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        parts = line.strip().split(separator)
        if len(parts) != 2 or not all(parts):
            raise DataError(f"{where}: expected 'image_path{separator}label_path', got {line[:80]!r}")
        image, label = root / parts[0], root / parts[1]
        for kind, file in (("image", image), ("label", label)):
            if not file.is_file():
                raise DataError(f"{where}: {kind} {str(file)!r} does not exist; check dataset_root and the list")
        rows.append((image, label, where))
    if not rows:
        raise DataError(f"file list {str(path)!r} holds no samples")
    return rows


class Dataset(_Dataset):
    """Items ``(image CHW float32, label HW int64)`` after ``transforms`` (a list of callables on
    ``{"img", "label"}``)."""

    def __init__(
        self,
        file_list: str,
        num_classes: int,
        dataset_root: str = "",
        transforms: Sequence[Callable[[dict], dict]] = (),
        separator: str = " ",
        ignore_index: int = 255,
    ) -> None:
        if not isinstance(num_classes, int) or num_classes < 2:
            raise ConfigError(f"num_classes is {num_classes!r}; a segmenter needs at least 2 classes")
        root = Path(dataset_root)
        self.rows = read_file_list(root / file_list, root, separator)
        self.num_classes, self.ignore_index = num_classes, int(ignore_index)
        self.transforms = list(transforms)
        found = []
        for _, label, where in self.rows:
            values = label_values(read_label(label))
            check_label_values(values, f"{str(label)!r} ({where})", num_classes, self.ignore_index)
            found.append((str(label), set(values.tolist())))
        check_binary_255(found, num_classes, self.ignore_index)

    def __len__(self) -> int:
        return len(self.rows)

    def record(self, index: int) -> dict:
        """Sample ``index`` as the transforms leave it: ``{"img", "label", "path"}``."""
        image_path, label_path, where = self.rows[index]
        data = {"img": read_image(image_path, "RGB"), "label": read_label(label_path), "path": str(image_path)}
        if data["img"].shape[:2] != data["label"].shape:
            raise DataError(
                f"{where}: image {data['img'].shape[:2]} and label {data['label'].shape} differ in size; "
                "a label has one class id per image pixel"
            )
        for transform in self.transforms:
            data = transform(data)
        return data

    def __getitem__(self, index: int):
        data = self.record(index)
        image = np.ascontiguousarray(np.asarray(data["img"], np.float32).transpose(2, 0, 1))
        return image, np.ascontiguousarray(data["label"], dtype=np.int64)
