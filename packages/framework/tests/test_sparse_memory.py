"""A 1M x 64 sparse table trained with lazy Adam allocates per step in proportion to the rows a
batch touches, never a 256 MB dense gradient (Adam's two moment tables are dense state, created
once, as Paddle's: the measurement starts after the first step made them)."""

from __future__ import annotations

import tracemalloc

import numpy as np

import paddlectl.framework as paddle

ROWS, DIM, BATCH, STEPS = 1_000_000, 64, 256, 100
DENSE_GRAD_BYTES = ROWS * DIM * 4


def test_lazy_adam_on_a_million_row_table_allocates_in_proportion_to_touched_rows():
    constant = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(0.01))  # cheaper than Xavier's draws
    table = paddle.nn.Embedding(ROWS, DIM, sparse=True, weight_attr=constant)
    head = paddle.nn.Linear(DIM, 1)
    opt = paddle.optimizer.Adam(0.01, parameters=table.parameters() + head.parameters(), lazy_mode=True)
    rng = np.random.default_rng(0)
    batches = [paddle.to_tensor(rng.integers(0, ROWS, (BATCH,))) for _ in range(STEPS + 1)]

    def step(ids):
        loss = (head(table(ids)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return float(loss)

    first = step(batches[0])  # creates the moment tables: dense state, not per-step allocation
    before = table.weight.numpy()[batches[1].numpy()].copy()
    tracemalloc.start()
    try:
        losses = [step(ids) for ids in batches[1:]]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    touched_bytes = BATCH * DIM * 4  # one step's gradient values: 64 KiB
    assert peak < 64 * touched_bytes, f"peak {peak / 2**20:.1f} MiB during the steps"
    assert peak < DENSE_GRAD_BYTES / 50
    assert not np.array_equal(table.weight.numpy()[batches[1].numpy()], before)
    assert np.isfinite([first, *losses]).all()
