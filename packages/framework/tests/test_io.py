"""paddle.io: datasets, samplers, collation and the DataLoader with real worker processes."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import io


class Squares(io.Dataset):
    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.full((2,), i, "float32"), i, 0.5 * i


class Stream(io.IterableDataset):
    """Each worker yields its own share of range(n), as get_worker_info documents."""

    def __init__(self, n=10):
        self.n = n

    def __iter__(self):
        info = io.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, self.n, step):
            yield np.array([i], "int64")


def _labels(loader):
    return [batch[1].numpy().tolist() for batch in loader]


# ----- collation -----------------------------------------------------------------------------------


def test_batches_match_paddle_dataloader(real_paddle):
    class Theirs(real_paddle.io.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": np.full((2,), i, "float32"), "y": i, "z": 0.5 * i, "s": "a"}

    class Ours(io.Dataset):
        __len__ = Theirs.__len__
        __getitem__ = Theirs.__getitem__

    theirs = list(real_paddle.io.DataLoader(Theirs(), batch_size=2))
    for got, want in zip(io.DataLoader(Ours(), batch_size=2), theirs, strict=True):
        assert set(got) == set(want) and got["s"] == want["s"]
        for key in "xyz":
            assert isinstance(got[key], paddle.Tensor)
            assert got[key].dtype.name == str(want[key].numpy().dtype)
            np.testing.assert_array_equal(got[key].numpy(), want[key].numpy())


def test_default_collate_fn_structures():
    batch = io.default_collate_fn([(paddle.ones([2]), [1, "a"]), (paddle.zeros([2]), [2, "b"])])
    assert isinstance(batch[0], paddle.Tensor) and batch[0].shape == [2, 2]
    np.testing.assert_array_equal(batch[1][0], [1, 2])
    assert batch[1][1] == ["a", "b"]
    with pytest.raises(RuntimeError, match="fields number not same"):
        io.default_collate_fn([(1, 2), (1,)])
    with pytest.raises(TypeError, match="collate_fn"):
        io.default_collate_fn([object()])


# ----- DataLoader, main process ---------------------------------------------------------------------


def test_len_drop_last_and_order():
    assert len(io.DataLoader(Squares(10), batch_size=3)) == 4
    assert len(io.DataLoader(Squares(10), batch_size=3, drop_last=True)) == 3
    assert _labels(io.DataLoader(Squares(5), batch_size=2)) == [[0, 1], [2, 3], [4]]
    assert _labels(io.DataLoader(Squares(5), batch_size=2, drop_last=True)) == [[0, 1], [2, 3]]
    assert _labels(io.DataLoader(Squares(4), batch_size=2)()) == [[0, 1], [2, 3]]


def test_batch_size_none_gives_samples_and_batch_sampler_is_used():
    samples = list(io.DataLoader(Squares(3), batch_size=None))
    assert len(samples) == 3 and samples[2][0].shape == [2] and samples[2][1] == 2
    sampler = io.BatchSampler(sampler=[4, 0, 2], batch_size=2)
    assert _labels(io.DataLoader(Squares(5), batch_sampler=sampler)) == [[4, 0], [2]]
    with pytest.raises(ValueError, match="batch_sampler"):
        io.DataLoader(Squares(5), batch_sampler=sampler, batch_size=2)
    with pytest.raises(ValueError, match="shuffle"):
        io.DataLoader(Stream(), shuffle=True)


def test_shuffle_is_reproducible_under_paddle_seed():
    paddle.seed(7)
    first = _labels(io.DataLoader(Squares(10), batch_size=4, shuffle=True))
    paddle.seed(7)
    again = _labels(io.DataLoader(Squares(10), batch_size=4, shuffle=True))
    assert first == again
    assert sorted(sum(first, [])) == list(range(10)) and sum(first, []) != list(range(10))
    paddle.seed(7)
    loader = io.DataLoader(Squares(10), batch_size=4, shuffle=True)
    assert _labels(loader) == first and _labels(loader) != first  # a new permutation every epoch


# ----- DataLoader, worker processes -------------------------------------------------------------------


def test_workers_give_the_same_batches_as_the_main_process():
    for shuffle in (False, True):
        paddle.seed(3)
        main = _labels(io.DataLoader(Squares(23), batch_size=4, shuffle=shuffle))
        paddle.seed(3)
        workers = _labels(io.DataLoader(Squares(23), batch_size=4, shuffle=shuffle, num_workers=3))
        assert workers == main


def test_iterable_dataset_sharded_across_workers():
    got = sorted(sum((b.numpy().ravel().tolist() for b in io.DataLoader(Stream(11), batch_size=2, num_workers=3)), []))
    assert got == list(range(11))
    assert [b.numpy().ravel().tolist() for b in io.DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert len(list(io.DataLoader(Stream(5), batch_size=2, drop_last=True))) == 2
    chained = io.DataLoader(io.ChainDataset([Stream(2), Stream(3)]), batch_size=None)
    assert [int(x.item()) for x in chained] == [0, 1, 0, 1, 2]


class _SeedAndInit(io.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = io.get_worker_info()
        return np.array([np.random.rand(), float(paddle.rand([1]).item())]), info.id, info.seed, os.environ["MARK"]


def _mark(worker_id):
    os.environ["MARK"] = f"init{worker_id}"


def test_worker_info_init_fn_and_seeds():
    def run():
        paddle.seed(11)
        loader = io.DataLoader(_SeedAndInit(), batch_size=2, num_workers=2, worker_init_fn=_mark)
        return [(b[0].numpy(), b[1].tolist(), b[2].tolist(), b[3]) for b in loader]

    first, again = run(), run()
    for (v1, ids, _seeds, marks), (v2, *_rest) in zip(first, again, strict=True):
        np.testing.assert_array_equal(v1, v2)  # reproducible under paddle.seed
        assert marks == [f"init{ids[0]}"] * 2
    seeds = {b[1][0]: b[2][0] for b in first}
    assert seeds[1] == seeds[0] + 1
    draws = {b[1][0]: b[0][0] for b in first[:2]}
    assert not np.allclose(draws[0], draws[1])  # workers draw different random streams
    assert io.get_worker_info() is None


class _Fails(io.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("bad sample 5")
        return i


def _workers(iterator):
    return iterator._pool.workers


def test_worker_exception_is_reraised_with_its_traceback_and_workers_stop():
    it = iter(io.DataLoader(_Fails(), batch_size=2, num_workers=2))
    with pytest.raises(ValueError, match=r"(?s)worker process 0.*__getitem__.*bad sample 5") as info:
        list(it)
    assert str(info.value).startswith("Caught ValueError in DataLoader worker process 0")
    assert not any(p.is_alive() for p in _workers(it))


def test_workers_stop_when_exhausted_or_collected():
    it = iter(io.DataLoader(Squares(6), batch_size=2, num_workers=2))
    processes = _workers(it)
    assert all(p.is_alive() for p in processes)
    assert len(list(it)) == 3
    assert not any(p.is_alive() for p in processes)
    it = iter(io.DataLoader(Squares(100), batch_size=2, num_workers=2))
    next(it)
    processes = _workers(it)
    del it
    assert not any(p.is_alive() for p in processes)


def test_keyboard_interrupt_stops_workers(monkeypatch):
    it = iter(io.DataLoader(Squares(100), batch_size=2, num_workers=2))
    next(it)
    processes = _workers(it)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    it._ready.clear()
    monkeypatch.setattr(it._pool.result_queue, "get", interrupted)
    with pytest.raises(KeyboardInterrupt):
        next(it)
    assert not any(p.is_alive() for p in processes)


def test_dead_worker_is_reported():
    it = iter(io.DataLoader(Squares(100), batch_size=2, num_workers=2, prefetch_factor=1))
    next(it)
    victim = _workers(it)[1]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join()
    with pytest.raises(RuntimeError, match="worker 1 .*exited unexpectedly .*SIGKILL"):
        list(it)


def test_persistent_workers_serve_several_epochs():
    loader = io.DataLoader(Squares(6), batch_size=2, num_workers=2, persistent_workers=True)
    first = iter(loader)
    pids = [p.pid for p in _workers(first)]
    assert _labels(first) == [[0, 1], [2, 3], [4, 5]]
    second = iter(loader)
    assert [p.pid for p in _workers(second)] == pids and all(p.is_alive() for p in _workers(second))
    assert _labels(second) == [[0, 1], [2, 3], [4, 5]]
    pool = loader._pool
    del loader, first, second
    assert pool.closed


# ----- datasets and samplers ---------------------------------------------------------------------------


def test_dataset_combinators():
    t = io.TensorDataset([paddle.to_tensor(np.arange(6).reshape(3, 2)), paddle.to_tensor([7, 8, 9])])
    assert len(t) == 3 and t[1][0].tolist() == [2, 3] and t[1][1].item() == 8
    composed = io.ComposeDataset([Squares(3), Squares(3)])
    assert len(composed) == 3 and len(composed[2]) == 6
    concat = io.ConcatDataset([Squares(2), Squares(3)])
    assert len(concat) == 5 and concat[3][1] == 1 and concat[-1][1] == 2
    assert io.Subset(Squares(5), [4, 1])[0][1] == 4
    with pytest.raises(ValueError, match="same"):
        io.ComposeDataset([Squares(2), Squares(3)])
    with pytest.raises(RuntimeError, match="IterableDataset"):
        len(Stream())


def _tensor_dataset():
    return io.TensorDataset(
        [paddle.to_tensor(np.arange(14, dtype=np.float32).reshape(7, 2)), paddle.to_tensor(np.arange(7) * 10)]
    )


def test_tensor_dataset_batches_equal_its_collated_rows():
    """The loader fetches a TensorDataset a batch at a time; the batches are the rows' default collation."""

    class Doubled(io.TensorDataset):  # its own rows: fetched row by row
        def __getitem__(self, index):
            return tuple(t * 2 for t in super().__getitem__(index))

    data = _tensor_dataset()
    order = [[6, 0, 3], [5], [1, 2, 4]]
    fast = list(io.DataLoader(data, batch_sampler=order))
    rows = list(io.DataLoader(data, batch_sampler=order, collate_fn=lambda b: io.default_collate_fn(b)))
    for a, b in zip(fast, rows, strict=True):
        assert [t.dtype for t in a] == [t.dtype for t in b]
        assert all(np.array_equal(x.numpy(), y.numpy()) for x, y in zip(a, b, strict=True))
    for batch_size, drop_last in ((3, False), (1, False), (4, True)):
        plain = list(io.DataLoader(data, batch_size=batch_size, drop_last=drop_last))
        doubled = list(io.DataLoader(Doubled(data.tensors), batch_size=batch_size, drop_last=drop_last))
        assert len(plain) == len(doubled) == (1 if drop_last else -(-7 // batch_size))
        for a, b in zip(plain, doubled, strict=True):
            assert np.array_equal(b[0].numpy(), 2 * a[0].numpy()) and a[1].shape == [len(a[1])]


def test_tensor_dataset_batches_match_paddle():
    paddle_ref = pytest.importorskip("paddle", reason="the Paddle 3.3.1 oracle is not installed")
    x, y = np.arange(14, dtype=np.float32).reshape(7, 2), np.arange(7, dtype=np.int64) * 10
    theirs = paddle_ref.io.DataLoader(
        paddle_ref.io.TensorDataset([paddle_ref.to_tensor(x), paddle_ref.to_tensor(y)]), batch_size=3
    )
    ours = io.DataLoader(_tensor_dataset(), batch_size=3)
    for a, b in zip(ours, theirs, strict=True):
        assert all(np.array_equal(p.numpy(), q.numpy()) for p, q in zip(a, b, strict=True))


def test_random_split_is_a_seeded_partition():
    paddle.seed(5)
    parts = io.random_split(Squares(10), [0.7, 0.3])
    assert [len(p) for p in parts] == [7, 3]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    paddle.seed(5)
    assert io.random_split(Squares(10), [7, 3])[0].indices == parts[0].indices
    with pytest.raises(ValueError, match="Sum of input lengths"):
        io.random_split(Squares(10), [3, 3])


def test_samplers():
    assert list(io.SequenceSampler(Squares(3))) == [0, 1, 2]
    paddle.seed(0)
    perm = list(io.RandomSampler(Squares(6)))
    assert sorted(perm) == list(range(6))
    draws = list(io.RandomSampler(Squares(3), replacement=True, num_samples=10))
    assert len(draws) == 10 and set(draws) <= {0, 1, 2}
    assert sorted(io.SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    weighted = list(io.WeightedRandomSampler([0.0, 1.0, 0.0], 5))
    assert weighted == [1] * 5
    assert list(io.BatchSampler(Squares(5), batch_size=2)) == [[0, 1], [2, 3], [4]]
    assert len(io.BatchSampler(Squares(5), batch_size=2, drop_last=True)) == 2
    with pytest.raises(ValueError, match="batch_size"):
        io.BatchSampler(Squares(5), batch_size=0)
    with pytest.raises(ValueError, match="num_samples"):
        io.RandomSampler(Squares(2), num_samples=5)


@pytest.mark.parametrize("n, batch, replicas, shuffle", [(10, 2, 3, False), (11, 3, 2, True), (4, 4, 1, True)])
def test_distributed_batch_sampler_matches_paddle(real_paddle, n, batch, replicas, shuffle):
    for rank in range(replicas):
        ours = io.DistributedBatchSampler(Squares(n), batch, num_replicas=replicas, rank=rank, shuffle=shuffle)
        theirs = real_paddle.io.DistributedBatchSampler(
            list(range(n)), batch, num_replicas=replicas, rank=rank, shuffle=shuffle
        )
        ours.set_epoch(2)
        theirs.set_epoch(2)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
