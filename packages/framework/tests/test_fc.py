"""The packed-weight GEMM (``kernels.gemm``), the ``fc`` op it serves and the ``fuse_fc`` pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import inference, jit, nn
from paddlectl.framework.core.op import Spec
from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.framework.jit import InputSpec
from paddlectl.framework.kernels import gemm
from paddlectl.framework.ops.fc import fc_op
from paddlectl.framework.static import parse_program, print_program
from paddlectl.framework.static.executor import Executor
from paddlectl.framework.static.input_spec import signatures
from paddlectl.framework.static.passes import PassManager
from paddlectl.framework.static.trace import trace

RNG = np.random.default_rng(0)
F32 = np.dtype("float32")


def _data(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _fc(x, packed, n, act, out, threads=1):
    """``kernels.gemm.fc`` split for ``threads`` as the ``fc`` op splits it (parallel past one)."""
    block, chunks = gemm.split(x.shape[0], x.shape[1], threads)
    gemm.fc.run(threads > 1, x, packed, n, act, out, block, chunks)


def _reference(x, w, b, act):
    out = x.astype(np.float64) @ w.astype(np.float64) + (0.0 if b is None else b)
    if act == gemm.GELU:
        erf = np.array([math.erf(v / math.sqrt(2.0)) for v in out.ravel()]).reshape(out.shape)
        return 0.5 * out * (1.0 + erf)
    return np.maximum(out, 0.0) if act == gemm.RELU else out


# ----- the kernel --------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [0, 1, 5, gemm.MR, 7, 64, 500, 1500])  # 1500 rows of 300 span row blocks
@pytest.mark.parametrize("k", [0, 1, 300])
@pytest.mark.parametrize("n", [1, 10, gemm.NR, gemm.NR + 1, 2 * gemm.NR + 30])
def test_fc_kernel_matches_a_float64_product_on_one_or_more_threads(m, k, n):
    """Every row count (full tiles, a last short tile), every column count (full panels, a last
    panel of one to all vectors), K = 0 (the bias alone), with and without bias, relu and gelu;
    split over three threads' tasks the same bits as on one."""
    x, w, b = _data(m, k), _data(k, n), _data(n)
    for bias, act in ((b, gemm.RELU), (None, 0), (b, gemm.GELU)):
        packed = gemm.pack(w, bias)
        out, split = np.full((m, n), np.nan, np.float32), np.full((m, n), np.nan, np.float32)
        _fc(x, packed, n, act, out)
        _fc(x, packed, n, act, split, threads=3)
        want = _reference(x, w, bias, act)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max(initial=0.0)))
        np.testing.assert_array_equal(split, out)


@pytest.mark.parametrize("m, k", [(128, 384), (128, 1536), (4096, 1536), (5, 300), (1, 8)])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_split_gives_equal_row_blocks_within_the_budget_and_whole_rounds_of_tasks(m, k, threads):
    block, chunks = gemm.split(m, k, threads)
    blocks = -(-m // block)
    assert block * 4 * k <= max(gemm.ROW_BLOCK_BYTES, gemm.MR * 4 * k)
    assert blocks * block - m < blocks  # equal blocks but for rounding
    assert blocks * chunks % threads == 0


def test_row_blocks_are_half_the_l2_read_from_sysfs(tmp_path):
    for index, (level, size) in enumerate((("1", "48K"), ("1", "32K"), ("2", "2048K"), ("3", "105M"))):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(level + "\n")
        (folder / "size").write_text(size + "\n")
    assert gemm._l2_bytes(str(tmp_path)) == 2 << 20
    (tmp_path / "index2" / "size").write_text("1M\n")
    assert gemm._l2_bytes(str(tmp_path)) == 1 << 20
    (tmp_path / "index2" / "size").write_text("65536\n")
    assert gemm._l2_bytes(str(tmp_path)) == 65536
    assert gemm._l2_bytes(str(tmp_path / "missing")) == 512 << 10


def test_fc_kernel_relu_keeps_nan_as_the_relu_op_does():
    x, w = np.array([[1.0, np.nan], [1.0, 0.0]], np.float32), np.array([[-1.0], [1.0]], np.float32)
    out = np.empty((2, 1), np.float32)
    _fc(x, gemm.pack(w), 1, gemm.RELU, out)
    want = paddle.nn.functional.relu(paddle.to_tensor(x @ w)).numpy()
    np.testing.assert_array_equal(out, want)
    assert np.isnan(out[0, 0]) and out[1, 0] == 0.0


def test_fc_kernel_gelu_is_the_gelu_op_bit_for_bit():
    x, w, b = _data(37, 20) * 3, _data(20, 90), _data(90)
    packed = gemm.pack(w, b)
    plain, fused = np.empty((37, 90), np.float32), np.empty((37, 90), np.float32)
    _fc(x, packed, 90, 0, plain)
    _fc(x, packed, 90, gemm.GELU, fused, threads=2)
    np.testing.assert_array_equal(fused, paddle.nn.functional.gelu(paddle.to_tensor(plain)).numpy())


def test_fc_kernel_reads_rows_with_a_stride():
    wide = _data(40, 3 * 50)
    x, w = wide[:, 50:100], _data(50, 70)
    assert not x.flags.c_contiguous
    out = np.empty((40, 70), np.float32)
    _fc(x, gemm.pack(w), 70, 0, out)
    np.testing.assert_allclose(out, _reference(x, w, None, 0), rtol=1e-5, atol=1e-4)


def test_pack_lays_out_panels_with_their_bias_first():
    w, b = _data(3, gemm.NR + 2), _data(gemm.NR + 2)
    packed = gemm.pack(w, b)
    assert packed.shape == (2, 4, gemm.NR) and packed.dtype == F32 and packed.flags.c_contiguous
    np.testing.assert_array_equal(packed[1, 0, :2], b[gemm.NR :])
    np.testing.assert_array_equal(packed[1, 1:, :2], w[:, gemm.NR :])
    np.testing.assert_array_equal(packed[0, 1:], w[:, : gemm.NR])
    assert not packed[1, :, 2:].any()  # padding past N


# ----- the op ------------------------------------------------------------------------------------


def test_fc_op_names_what_it_cannot_take():
    packed = Spec((-(-70 // gemm.NR), 9, gemm.NR), F32)  # enough panels for 70 columns at this CPU's width
    assert fc_op.infer(Spec(("N", 5, 8), F32), packed, n=70).shape == ("N", 5, 70)
    with pytest.raises(DTypeError, match="must be float32"):
        fc_op.infer(Spec((5, 8), np.dtype("float64")), packed, n=70)
    with pytest.raises(ShapeError, match="last dim must be K = 9 - 1"):
        fc_op.infer(Spec((5, 7), F32), packed, n=70)
    with pytest.raises(ShapeError, match="kernels.gemm.pack"):
        fc_op.infer(Spec((5, 8), F32), Spec((2, 9, gemm.NR // 2), F32), n=70)
    with pytest.raises(ShapeError, match="holding 200 columns"):
        fc_op.infer(Spec((5, 8), F32), packed, n=200)
    with pytest.raises(ValueError, match="activation must be one of"):
        fc_op.infer(Spec((5, 8), F32), packed, n=70, activation="swish")


# ----- the pass ----------------------------------------------------------------------------------


class Mixed(nn.Layer):
    """Each form the pass meets: linear + relu, a linear without bias, a product by a transposed
    weight, a product read twice (its bias add must stay outside), and a float64 product."""

    def __init__(self):
        super().__init__()
        self.first, self.plain = nn.Linear(8, 70), nn.Linear(70, 20, bias_attr=False)
        self.tied = self.create_parameter([12, 20])  # used as its transpose, as a tied embedding is
        self.shared = self.create_parameter([12, 6])
        self.shared_bias = self.create_parameter([6], is_bias=True)
        self.wide_weight = self.create_parameter([12, 3], dtype="float64")

    def forward(self, x):
        h = paddle.matmul(self.plain(nn.functional.relu(self.first(x))), self.tied, transpose_y=True)
        product = paddle.matmul(h, self.shared)
        wide = paddle.matmul(paddle.cast(h, "float64"), self.wide_weight)
        return product + self.shared_bias, product * 2.0, wide


def _mixed_program():
    paddle.seed(1)
    layer = Mixed()
    layer.eval()
    program, _ = trace(layer.forward, signatures([InputSpec([None, 5, 8], "float32", "x")]), layer=layer)
    return layer, program


def test_fuse_fc_takes_products_by_known_float32_weights_with_their_bias_and_relu():
    layer, program = _mixed_program()
    result = PassManager(pipeline=["fuse_fc"]).run(program)
    fcs = [op for op in result.program.walk() if op.name == "fc"]
    assert result.records[0].changed == 4
    assert [(op.attrs["n"], op.attrs["activation"]) for op in fcs] == [(70, "relu"), (20, ""), (12, ""), (6, "")]
    names = [op.name for op in result.program.walk()]
    assert names.count("matmul") == 1 and names.count("add") == 1 and "relu" not in names  # float64; shared's bias
    text = print_program(result.program)
    again = parse_program(text, result.program.weights)
    assert again == result.program and print_program(again) == text
    for batch in (1, 7):
        x = _data(batch, 5, 8)
        with paddle.no_grad():
            expected = [t.numpy() for t in layer(paddle.to_tensor(x))]
        for out, want in zip(Executor(result.program).run([x]), expected, strict=True):
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_fuse_fc_takes_the_exact_gelu_and_leaves_the_tanh_one():
    paddle.seed(3)
    layer = nn.Sequential(nn.Linear(8, 40), nn.GELU(), nn.Linear(40, 9), nn.GELU(approximate=True))
    layer.eval()
    program, _ = trace(layer.forward, signatures([InputSpec([None, 8], "float32", "x")]), layer=layer)
    result = PassManager(pipeline=["fuse_fc"]).run(program)
    assert [op.attrs["activation"] for op in result.program.walk() if op.name == "fc"] == ["gelu", ""]
    assert [op.name for op in result.program.walk()].count("gelu") == 1
    x = _data(300, 8)
    with paddle.no_grad():
        want = layer(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(Executor(result.program).run([x])[0], want, rtol=1e-5, atol=1e-5)


def test_fuse_fc_gives_every_thread_count_the_same_program():
    _, program = _mixed_program()
    one, two = (PassManager(pipeline=["fuse_fc"], threads=threads).run(program) for threads in (1, 2))
    assert print_program(two.program) == print_program(one.program)


def test_predictor_uses_fc_on_one_and_two_threads(tmp_path):
    paddle.seed(2)
    layer = nn.Sequential(nn.Linear(6, 33), nn.ReLU(), nn.Linear(33, 4))
    layer.eval()
    path = str(tmp_path / "mlp")
    jit.save(layer, path, input_spec=[InputSpec([None, 6], "float32", "x")])
    x = _data(9, 6)
    with paddle.no_grad():
        expected = layer(paddle.to_tensor(x)).numpy()
    for threads in (1, 2):
        config = inference.Config(path)
        config.set_cpu_math_library_num_threads(threads)
        predictor = inference.create_predictor(config)
        assert "fc" in [op.name for op in predictor.optimized_program.walk()]
        np.testing.assert_allclose(predictor.run([x])[0], expected, rtol=1e-5, atol=1e-5)
    paddle_name = inference.Config(path)
    paddle_name.delete_pass("fc_fuse_pass")
    assert "fuse_fc           off" in inference.create_predictor(paddle_name).pass_report()
