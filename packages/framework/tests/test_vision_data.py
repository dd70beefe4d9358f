import gzip
import random
import struct

import numpy as np
import pytest
from PIL import Image

import paddlectl.framework as paddle
from paddlectl.framework.vision import datasets, transforms


def _write_idx(path, array: np.ndarray, gz: bool) -> None:
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(np.uint8).tobytes()
    path.write_bytes(gzip.compress(data) if gz else data)


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_reads_local_idx_files(tmp_path, gz):
    images = np.random.default_rng(0).integers(0, 256, (5, 28, 28), dtype=np.uint8)
    labels = np.arange(5, dtype=np.uint8)
    _write_idx(tmp_path / "img", images, gz)
    _write_idx(tmp_path / "lbl", labels, gz)
    ds = datasets.MNIST(image_path=tmp_path / "img", label_path=tmp_path / "lbl", transform=transforms.ToTensor())
    assert len(ds) == 5
    image, label = ds[3]
    assert image.shape == [1, 28, 28] and image.dtype == paddle.float32
    np.testing.assert_allclose(image.numpy()[0], images[3] / 255.0, rtol=1e-6)
    assert label.tolist() == [3]


def test_truncated_idx_and_missing_paths_are_refused(tmp_path):
    _write_idx(tmp_path / "img", np.zeros((4, 28, 28)), gz=False)
    (tmp_path / "cut").write_bytes((tmp_path / "img").read_bytes()[:-10])
    with pytest.raises(ValueError, match="truncated"):
        datasets.read_idx(tmp_path / "cut")
    with pytest.raises(ValueError, match="downloads nothing"):
        datasets.MNIST()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        datasets.FashionMNIST(image_path=tmp_path / "nope", label_path=tmp_path / "img")


def test_cifar10_binary_directory(tmp_path):
    rng = np.random.default_rng(1)
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    records = {}
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        labels = rng.integers(0, 10, 3, dtype=np.uint8)
        pixels = rng.integers(0, 256, (3, 3072), dtype=np.uint8)
        (folder / name).write_bytes(np.concatenate([labels[:, None], pixels], axis=1).tobytes())
        records[name] = (labels, pixels)
    train = datasets.Cifar10(data_file=tmp_path, mode="train")
    test = datasets.Cifar10(data_file=tmp_path, mode="test")
    assert len(train) == 15 and len(test) == 3
    image, label = test[1]
    labels, pixels = records["test_batch.bin"]
    assert image.shape == (32, 32, 3) and int(label) == labels[1]
    np.testing.assert_array_equal(image[..., 0].reshape(-1), pixels[1, :1024])


def test_dataset_folder_and_image_folder(tmp_path):
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for i in range(2):
            Image.fromarray(np.full((6, 8, 3), i * 50, np.uint8)).save(tmp_path / cls / f"{i}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    ds = datasets.DatasetFolder(
        tmp_path, transform=transforms.Compose([transforms.Resize((4, 4)), transforms.ToTensor()])
    )
    assert ds.classes == ["cat", "dog"] and len(ds) == 4
    image, target = ds[3]
    assert image.shape == [3, 4, 4] and target.tolist() == [1]
    assert len(datasets.ImageFolder(tmp_path)) == 4


def test_transforms_follow_paddle_defaults():
    img = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    t = transforms.ToTensor()(img)
    assert t.shape == [3, 4, 6]
    norm = transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])(t)
    np.testing.assert_allclose(norm.numpy(), (t.numpy() - 0.5) / 0.5, rtol=1e-6)
    assert transforms.Resize(2)(img).shape == (2, 3, 3)  # shorter side to 2, aspect kept
    assert transforms.CenterCrop(2)(img).shape == (2, 2, 3)
    random.seed(3)  # Paddle's transforms draw from Python's random module
    a = transforms.RandomCrop(3)(img)
    random.seed(3)
    np.testing.assert_array_equal(a, transforms.RandomCrop(3)(img))
    flipped = transforms.RandomHorizontalFlip(prob=1.0)(img)
    np.testing.assert_array_equal(flipped, img[:, ::-1])
    with pytest.raises(ValueError, match="pad_if_needed"):
        transforms.RandomCrop(10)(img)


def test_resize_matches_real_paddle(real_paddle):
    img = np.random.default_rng(0).integers(0, 256, (10, 14, 3), dtype=np.uint8)
    ours = transforms.Resize((7, 9))(img)
    theirs = real_paddle.vision.transforms.Resize((7, 9))(img)  # arrays go through OpenCV in Paddle
    np.testing.assert_array_equal(ours, np.asarray(theirs))
