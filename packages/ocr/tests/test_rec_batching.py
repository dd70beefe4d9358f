"""Width-bucketed recogniser batches (``Train.sampler: {name: WidthBatchSampler}``): every line once
an epoch, similar widths together, the same order for the same seed, each batch cut to its widest
line (never below its labels' CTC paths), and training through the trainer with them."""

import json

import numpy as np
import pytest
from _ocr_lines import rec_config, write_lines

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.hapi.trainer import train
from paddlectl.ocr.rec.batching import WidthBatchSampler, ctc_steps_needed, pad_to_widest, resized_widths
from paddlectl.ocr.rec.task import RecTask

WIDTHS = np.random.default_rng(1).integers(20, 321, 1000)


def _epoch(sampler, seed=0):
    paddle.seed(seed)
    return list(sampler)


@pytest.mark.parametrize("drop_last", [False, True])
def test_every_line_once_an_epoch(drop_last):
    sampler = WidthBatchSampler(WIDTHS, batch_size=32, drop_last=drop_last)
    batches = _epoch(sampler)
    seen = np.concatenate(batches)
    assert len(batches) == len(sampler) == (31 if drop_last else 32)
    assert len(set(seen.tolist())) == len(seen)
    assert len(seen) == (992 if drop_last else 1000)
    assert sorted(map(len, batches))[1:] == [32] * (len(batches) - 1)  # without drop_last one batch of 8


def test_batches_hold_lines_of_similar_width():
    batches = _epoch(WidthBatchSampler(WIDTHS, batch_size=32))
    spread = np.mean([np.ptp(WIDTHS[b]) for b in batches])
    padded = np.mean([WIDTHS[b].max() for b in batches])
    assert spread < 40  # a random batch of 32 spans ~280 of these widths
    assert padded < 0.7 * 320  # the mean line is 170 wide: most of the fixed width's padding is gone


def test_the_order_follows_the_seed():
    sampler = WidthBatchSampler(WIDTHS, batch_size=32)
    assert _epoch(sampler, 5) == _epoch(sampler, 5)
    assert _epoch(sampler, 5) != _epoch(sampler, 6)


def test_without_shuffle_the_batches_are_fixed():
    sampler = WidthBatchSampler(WIDTHS, batch_size=32, shuffle=False)
    assert _epoch(sampler, 5) == _epoch(sampler, 6)


@pytest.mark.parametrize("bad", [0, 1.5, "8"])
def test_pool_size_must_be_a_positive_integer(bad):
    with pytest.raises(ConfigError, match="pool_batches"):
        WidthBatchSampler(WIDTHS, batch_size=32, pool_batches=bad)


def test_ctc_needs_a_blank_between_repeated_characters():
    assert ctc_steps_needed(np.array([3, 4, 5, 0, 0])) == 3
    assert ctc_steps_needed(np.array([3, 3, 3, 5, 0])) == 6
    assert ctc_steps_needed(np.zeros(4, "int64")) == 0


def _line(inked: int, width: int = 96) -> np.ndarray:
    image = np.zeros((3, 32, width), "float32")
    image[:, :, :inked] = -0.5
    return image


def test_a_batch_is_cut_to_its_widest_line_in_whole_ctc_steps():
    images, labels = pad_to_widest([(_line(21), np.array([1, 2, 0])), (_line(37), np.array([2, 0, 0]))])
    assert images.shape == (2, 3, 32, 40)  # 37 columns -> 10 steps of 4
    np.testing.assert_array_equal(images[1, :, :, :37], -0.5)
    np.testing.assert_array_equal(labels, [[1, 2, 0], [2, 0, 0]])


def test_a_batch_keeps_room_for_its_labels_ctc_paths():
    label = np.array([1, 1, 1, 1, 2, 0])  # 5 characters, 3 repeats: 8 steps
    images, _ = pad_to_widest([(_line(9), label)])
    assert images.shape[-1] == 32
    assert pad_to_widest([(_line(96), label)])[0].shape[-1] == 96  # never wider than the input


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    root = tmp_path_factory.mktemp("rec_batch_lines")
    return root, write_lines(root, n=16)


def _config(lines, out, **sampler):
    config = rec_config(*lines, out, width=160)
    config["Train"]["sampler"] = {"name": "WidthBatchSampler", **sampler}
    config["Train"]["loader"]["shuffle"] = True
    return config


def test_widths_are_the_resized_lines(lines, tmp_path):
    task = RecTask()
    dataset = task.dataset(_config(lines, tmp_path), "Train")
    widths = resized_widths(dataset, [3, 32, 160])
    first = dataset[0][0]
    inked = np.flatnonzero(np.any(first != 0, axis=(0, 1)))[-1] + 1
    assert widths[0] == inked
    assert widths.max() < 160


def test_training_with_width_batches_lowers_the_loss(lines, tmp_path):
    config = _config(lines, tmp_path, pool_batches=2)
    config["Global"]["epochs"] = 6
    train(RecTask(), config)
    log = [json.loads(s) for s in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if r["kind"] == "train"]
    assert len(losses) == 12 and all(np.isfinite(losses))
    assert np.mean(losses[-4:]) < 0.7 * np.mean(losses[:2]), losses


def test_the_sampler_is_checked_with_the_config(lines, tmp_path):
    config = _config(lines, tmp_path)
    config["Train"]["sampler"]["name"] = "WidthSampler"
    with pytest.raises(ConfigError, match="WidthBatchSampler"):
        RecTask().check_config(config)
    svtr = rec_config(*lines, tmp_path, backbone="SVTRNet")
    svtr["Train"]["sampler"] = {"name": "WidthBatchSampler"}
    with pytest.raises(ConfigError, match="SVTRNet cannot take"):
        RecTask().check_config(svtr)
