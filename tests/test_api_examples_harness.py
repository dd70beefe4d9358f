"""The docstring-example replay (benchmarks/paddle_api_examples.py) reads blocks and compares
printed numbers as intended: the figure issue 30 asks for is only as good as these two steps."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from _api_examples import _blocks, compare  # noqa: E402

DOC = """Adds.

    Examples:

        .. code-block:: python

            >>> import paddle
            >>> x = paddle.to_tensor([2, 3], 'float64')
            >>> for i in range(2):
            ...     print(i)
            0
            1

        .. code-block:: python

            >>> # doctest: +REQUIRES(env:GPU)
            >>> paddle.device.set_device('gpu')

        .. code-block:: python

            >>> y = 1  # doctest: +SKIP('needs a file')
"""

PADDLE = "Tensor(shape=[3], dtype=float64, place=Place(cpu), stop_gradient=True,\n       [3., 8., 6.])\n"


def test_blocks_keep_cpu_examples_and_their_continuations():
    assert _blocks(DOC) == [
        [
            "import paddle\n",
            "x = paddle.to_tensor([2, 3], 'float64')\n",
            "for i in range(2):\n    print(i)\n",
        ]
    ]


def test_compare_ignores_layout_but_not_values_or_dtypes():
    ours = "Tensor(shape=[3], dtype=float64, place=Place(cpu), stop_gradient=True,\n       [3.0, 8.00001, 6.])\n"
    assert compare([PADDLE], [ours])
    assert compare(["paddle.Size([2, 3])\n"], ["[2, 3]\n"])
    assert not compare([PADDLE], [ours.replace("8.00001", "8.001")])
    assert not compare([PADDLE], [ours.replace("float64", "float32")])
    assert not compare([PADDLE], [ours.replace("[3.0, ", "[")])
    assert not compare(["True\n"], ["False\n"])
    assert compare(["[nan, inf]\n"], ["[nan, inf]\n"])
    assert not compare(["x: float32\n"], ["x: int32\n"])
