"""``paddle.vision.datasets`` readers for files the user already has: nothing is ever downloaded.

MNIST/Fashion-MNIST read IDX files (optionally gzipped), CIFAR reads the pickle-free *binary*
distribution (``cifar-10-batches-bin``), DatasetFolder/ImageFolder read a directory of images.
"""

from __future__ import annotations

import gzip
import os
import tarfile
from pathlib import Path

import numpy as np

from ..io.dataset import Dataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def _require(path, what: str, hint: str) -> Path:
    if path is None:
        raise ValueError(f"{what}: no path given; paddlectl downloads nothing, so pass {hint}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what}: {path} does not exist; pass {hint}")
    return path


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """An IDX file (the MNIST format: magic, dims, big-endian sizes, raw data) as an array."""
    path = Path(path)
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":  # gzip magic, whatever the file is called
        data = gzip.decompress(data)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    dtype = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}.get(data[2])
    if dtype is None:
        raise ValueError(f"{path}: unknown IDX element type 0x{data[2]:02x}")
    ndim = data[3]
    dims = np.frombuffer(data, ">u4", count=ndim, offset=4).astype(int)
    expected = int(np.prod(dims)) * np.dtype(dtype).itemsize
    payload = data[4 + 4 * ndim :]
    if len(payload) != expected:
        raise ValueError(
            f"{path}: IDX header promises {expected} bytes of data, the file holds {len(payload)}; is it truncated?"
        )
    return np.frombuffer(payload, dtype).reshape(dims).astype(np.dtype(dtype).newbyteorder("="))


class MNIST(Dataset):
    """Handwritten digits from local IDX files; items are (HxW uint8 image or its transform, int64 label[1])."""

    NAME = "MNIST"

    def __init__(
        self,
        image_path=None,
        label_path=None,
        mode: str = "train",
        transform=None,
        download: bool = False,
        backend=None,
    ) -> None:
        if mode not in ("train", "test"):
            raise ValueError(f"{self.NAME}: mode must be 'train' or 'test', got {mode!r}")
        hint = "image_path= and label_path= to the IDX files (e.g. train-images-idx3-ubyte.gz)"
        self.images = read_idx(_require(image_path, self.NAME, hint))
        self.labels = read_idx(_require(label_path, self.NAME, hint)).astype("int64")
        if len(self.images) != len(self.labels):
            raise ValueError(f"{self.NAME}: {len(self.images)} images but {len(self.labels)} labels")
        self.mode, self.transform, self.backend = mode, transform, backend or "cv2"

    def __getitem__(self, idx):
        image = self.images[idx]
        if self.backend == "pil":
            from PIL import Image

            image = Image.fromarray(image, mode="L")
        if self.transform is not None:
            image = self.transform(image)
        return image, np.array([self.labels[idx]], dtype="int64")

    def __len__(self) -> int:
        return len(self.labels)


class FashionMNIST(MNIST):
    NAME = "FashionMNIST"


def _cifar_records(data_file: Path, names: list[str], label_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    record = label_bytes + 3072
    blobs = []
    if data_file.is_dir():
        for name in names:
            matches = list(data_file.rglob(name))
            if not matches:
                raise FileNotFoundError(f"CIFAR: {name} not found under {data_file}")
            blobs.append(matches[0].read_bytes())
    else:
        with tarfile.open(data_file) as archive:
            members = {Path(m.name).name: m for m in archive.getmembers() if m.isfile()}
            for name in names:
                if name not in members:
                    raise FileNotFoundError(f"CIFAR: {name} not found in {data_file}")
                blobs.append(archive.extractfile(members[name]).read())
    raw = b"".join(blobs)
    if len(raw) % record:
        raise ValueError(f"CIFAR: {data_file} holds {len(raw)} bytes, not a whole number of {record}-byte records")
    table = np.frombuffer(raw, np.uint8).reshape(-1, record)
    images = table[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), table[:, label_bytes - 1].astype("int64")


class Cifar10(Dataset):
    """CIFAR-10 from the binary distribution (a directory or the .tar.gz); items are (32x32x3 uint8, int64)."""

    TRAIN = [f"data_batch_{i}.bin" for i in range(1, 6)]
    TEST = ["test_batch.bin"]
    LABEL_BYTES = 1

    def __init__(
        self, data_file=None, mode: str = "train", transform=None, download: bool = False, backend=None
    ) -> None:
        if mode not in ("train", "test"):
            raise ValueError(f"{type(self).__name__}: mode must be 'train' or 'test', got {mode!r}")
        path = _require(data_file, type(self).__name__, "data_file= to the CIFAR binary directory or .tar.gz")
        self.images, self.labels = _cifar_records(path, self.TRAIN if mode == "train" else self.TEST, self.LABEL_BYTES)
        self.transform, self.backend = transform, backend or "cv2"

    def __getitem__(self, idx):
        image = self.images[idx]
        if self.backend == "pil":
            from PIL import Image

            image = Image.fromarray(image)
        if self.transform is not None:
            image = self.transform(image)
        return image, np.array(self.labels[idx], dtype="int64")

    def __len__(self) -> int:
        return len(self.labels)


class Cifar100(Cifar10):
    """CIFAR-100 binary: two label bytes (coarse, fine); the fine label is used, as in Paddle."""

    TRAIN = ["train.bin"]
    TEST = ["test.bin"]
    LABEL_BYTES = 2


def default_loader(path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


def _is_image(path: str, extensions, is_valid_file) -> bool:
    return is_valid_file(path) if is_valid_file is not None else path.lower().endswith(tuple(extensions))


class DatasetFolder(Dataset):
    """``root/class_x/xxx.png`` -> (image, class index); classes are the sorted sub-directory names."""

    def __init__(self, root, loader=None, extensions=IMG_EXTENSIONS, transform=None, is_valid_file=None) -> None:
        root = _require(root, type(self).__name__, "root= to a directory with one sub-directory per class")
        self.classes = sorted(d.name for d in root.iterdir() if d.is_dir())
        if not self.classes:
            raise ValueError(f"{type(self).__name__}: {root} has no class sub-directories")
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = [
            (str(p), self.class_to_idx[c])
            for c in self.classes
            for p in sorted((root / c).rglob("*"))
            if p.is_file() and _is_image(str(p), extensions, is_valid_file)
        ]
        if not self.samples:
            raise ValueError(f"{type(self).__name__}: no images with extensions {extensions} under {root}")
        self.targets = [t for _, t in self.samples]
        self.loader, self.transform = loader or default_loader, transform

    def __getitem__(self, idx):
        path, target = self.samples[idx]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, np.array([target], dtype="int64")

    def __len__(self) -> int:
        return len(self.samples)


class ImageFolder(Dataset):
    """Every image below ``root``, without labels (Paddle's ImageFolder returns ``[sample]``)."""

    def __init__(self, root, loader=None, extensions=IMG_EXTENSIONS, transform=None, is_valid_file=None) -> None:
        root = _require(root, "ImageFolder", "root= to a directory of images")
        self.samples = [
            str(p) for p in sorted(root.rglob("*")) if p.is_file() and _is_image(str(p), extensions, is_valid_file)
        ]
        if not self.samples:
            raise ValueError(f"ImageFolder: no images with extensions {extensions} under {root}")
        self.loader, self.transform = loader or default_loader, transform

    def __getitem__(self, idx):
        sample = self.loader(self.samples[idx])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self) -> int:
        return len(self.samples)
