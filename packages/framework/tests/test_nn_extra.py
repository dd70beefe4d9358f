"""Extra nn.functional ops and layers against real Paddle (outputs, input and parameter gradients)
and finite differences; typed errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.core.op import Spec
from paddlectl.framework.errors import ShapeError
from paddlectl.framework.ops import patches

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


ACTIVATIONS = [
    lambda F, x: F.hardtanh(x * 2, -0.5, 1.5),
    lambda F, x: F.tanhshrink(x),
    lambda F, x: F.softsign(x),
    lambda F, x: F.selu(x),
    lambda F, x: F.selu(x, scale=1.2, alpha=0.5),
    lambda F, x: F.celu(x, alpha=0.7),
    lambda F, x: F.glu(x, axis=-1),
    lambda F, x: F.glu(x, axis=0),
    lambda F, x: F.softshrink(x, 0.3),
    lambda F, x: F.hardshrink(x, 0.3),
    lambda F, x: F.log_sigmoid(x * 10),
    lambda F, x: F.thresholded_relu(x, 0.2),
    lambda F, x: F.normalize(x),
    lambda F, x: F.normalize(x, p=1, axis=-1),
    lambda F, x: F.label_smooth(F.softmax(x), epsilon=0.2),
]


@pytest.mark.parametrize("fn", ACTIVATIONS)
def test_elementwise_functional_matches_paddle(real_paddle, fn):
    compare(real_paddle, lambda P: lambda x: fn(P.nn.functional, x), r(4, 6), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "fn,shapes",
    [
        (lambda F, a, b: F.cosine_similarity(a, b), [(3, 4), (3, 4)]),
        (lambda F, a, b: F.cosine_similarity(a, b, axis=-1), [(2, 3, 4), (1, 3, 4)]),
        (lambda F, a, b: F.pairwise_distance(a, b), [(3, 4), (3, 4)]),
        (lambda F, a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True), [(3, 4), (3, 4)]),
        (lambda F, a, b: F.linear(a, b), [(2, 3, 4), (4, 5)]),
        (lambda F, a, b: F.linear(a, b, b[0]), [(3, 4), (4, 4)]),
        (lambda F, a, b: F.label_smooth(F.softmax(a), prior_dist=F.softmax(b), epsilon=0.3), [(3, 4), (1, 4)]),
        (lambda F, a, b: F.margin_ranking_loss(a, b, (a * b).sign(), margin=0.1), [(3, 4), (3, 4)]),
        (lambda F, a, b: F.margin_ranking_loss(a, b, (a * b).sign(), reduction="sum"), [(5,), (5,)]),
        (lambda F, a, b: F.sigmoid_focal_loss(a, (b > 0).astype("float32")), [(3, 4), (3, 4)]),
        (
            lambda F, a, b: F.sigmoid_focal_loss(a, (b > 0).astype("float32"), a.abs().sum() + 1, 0.4, 1.5, "mean"),
            [(3, 4), (3, 4)],
        ),
    ],
)
def test_binary_functional_matches_paddle(real_paddle, fn, shapes):
    compare(
        real_paddle, lambda P: lambda a, b: fn(P.nn.functional, a, b), *[r(*s) for s in shapes], rtol=1e-5, atol=1e-5
    )


def test_bilinear_matches_paddle(real_paddle):
    compare(
        real_paddle, lambda P: lambda a, b, w, c: P.nn.functional.bilinear(a, b, w, c), r(3, 2), r(3, 4), r(5, 2, 4),
        r(1, 5), rtol=1e-5, atol=1e-5,
    )  # fmt: skip


PATCHES = [
    (lambda F, x: F.pixel_shuffle(x, 2), (2, 8, 3, 3)),
    (lambda F, x: F.pixel_shuffle(x, 2, data_format="NHWC"), (2, 3, 3, 8)),
    (lambda F, x: F.pixel_unshuffle(x, 2), (2, 2, 4, 6)),
    (lambda F, x: F.pixel_unshuffle(x, 2, data_format="NHWC"), (1, 4, 6, 2)),
    (lambda F, x: F.unfold(x, 2), (2, 3, 4, 5)),
    (lambda F, x: F.unfold(x, [2, 3], strides=[2, 1], paddings=1, dilations=[1, 2]), (1, 2, 5, 6)),
    (lambda F, x: F.unfold(x, 3, paddings=[1, 0, 2, 1]), (1, 2, 4, 4)),
    (lambda F, x: F.fold(x, [4, 5], 2), (2, 12, 12)),
    (lambda F, x: F.fold(x, [5, 6], [2, 3], strides=[2, 1], paddings=1, dilations=[1, 2]), (1, 12, 12)),
    (lambda F, x: F.zeropad2d(x, [1, 0, 2, 1]), (1, 2, 3, 3)),
]


@pytest.mark.parametrize("fn,shape", PATCHES)
def test_patches_match_paddle(real_paddle, fn, shape):
    compare(real_paddle, lambda P: lambda x: fn(P.nn.functional, x), r(*shape))


def test_unfold_fold_gradients_by_finite_differences(gradcheck):
    gradcheck(lambda x: ours.nn.functional.unfold(x, 2, strides=1, paddings=1), r(1, 2, 3, 3))
    gradcheck(lambda x: ours.nn.functional.fold(x, [3, 3], 2, paddings=[1, 0, 0, 1]), r(1, 8, 9))


def test_unfold_shape_rule_and_errors():
    f = np.dtype("float32")
    spec = patches.unfold_op.infer(Spec(("N", 3, 8, 8), f), kernel=(3, 3), stride=(1, 1), pads=(1, 1, 1, 1), dil=(1, 1))
    assert spec.shape == ("N", 27, 64)
    spec = patches.fold_op.infer(
        Spec(("N", 12, 20), f), out_hw=(4, 5), kernel=(2, 2), stride=(1, 1), pads=(0,) * 4, dil=(1, 1)
    )
    assert spec.shape == ("N", 3, 4, 5)
    with pytest.raises(ShapeError, match="4-D"):
        ours.nn.functional.unfold(ours.rand([3, 4, 4]), 2)
    with pytest.raises(ShapeError, match="does not fit"):
        ours.nn.functional.unfold(ours.rand([1, 1, 2, 2]), 3)
    with pytest.raises(ShapeError, match="blocks"):
        ours.nn.functional.fold(ours.rand([1, 12, 7]), [4, 5], 2)
    with pytest.raises(ShapeError, match="divisible"):
        ours.nn.functional.pixel_shuffle(ours.rand([1, 3, 2, 2]), 2)
    with pytest.raises(ShapeError, match="even"):
        ours.nn.functional.glu(ours.rand([2, 3]))
    with pytest.raises(ShapeError, match="in_features"):
        ours.nn.functional.linear(ours.rand([2, 3]), ours.rand([4, 5]))


SDPA = [
    {},
    {"is_causal": True},
    {"scale": 0.3},
    {"mask": "bool"},
    {"mask": "float"},
    {"kv_heads": 1},
]


@pytest.mark.parametrize("case", SDPA)
def test_scaled_dot_product_attention_matches_paddle(real_paddle, case):
    b, s, h, d = 2, 4, 2, 8
    kv_heads = case.get("kv_heads", h)
    q, k, v = (
        r(b, s, h, d),
        r(b, 5 if "mask" in case else s, kv_heads, d),
        r(b, 5 if "mask" in case else s, kv_heads, d),
    )
    mask = None
    if case.get("mask") == "bool":
        mask = RNG.random((b, h, s, 5)) > 0.3
        mask[..., 0] = True
    elif case.get("mask") == "float":
        mask = r(b, 1, s, 5)

    def build(P):
        def fn(q, k, v):
            m = None if mask is None else P.to_tensor(mask)
            return P.nn.functional.scaled_dot_product_attention(
                q, k, v, m, is_causal=case.get("is_causal", False), scale=case.get("scale")
            )

        return fn

    compare(real_paddle, build, q, k, v, rtol=1e-4, atol=1e-5)


def _pair(real_paddle, build):
    mine, theirs = build(ours), build(real_paddle)
    theirs.set_state_dict({k: v.numpy() for k, v in mine.state_dict().items()})
    mine.eval()
    theirs.eval()
    return mine, theirs


LAYERS = [
    (lambda nn: nn.Hardtanh(-0.5, 0.5), [(2, 3)]),
    (lambda nn: nn.SiLU(), [(2, 3)]),
    (lambda nn: nn.SELU(), [(2, 3)]),
    (lambda nn: nn.CELU(0.5), [(2, 3)]),
    (lambda nn: nn.GLU(axis=1), [(2, 4)]),
    (lambda nn: nn.Tanhshrink(), [(2, 3)]),
    (lambda nn: nn.Softsign(), [(2, 3)]),
    (lambda nn: nn.Unflatten(1, [2, 3]), [(2, 6)]),
    (lambda nn: nn.PixelShuffle(2), [(1, 8, 2, 2)]),
    (lambda nn: nn.Pad2D([1, 2, 0, 1], mode="reflect"), [(1, 2, 3, 4)]),
    (lambda nn: nn.Pad2D(1, value=2.0), [(1, 2, 3, 4)]),
    (lambda nn: nn.ZeroPad2D([1, 0, 0, 2]), [(1, 2, 3, 4)]),
    (lambda nn: nn.CosineSimilarity(axis=-1), [(3, 4), (3, 4)]),
    (lambda nn: nn.PairwiseDistance(p=3.0), [(3, 4), (3, 4)]),
    (lambda nn: nn.Bilinear(3, 2, 4), [(5, 3), (5, 2)]),
    (lambda nn: nn.Unfold([2, 2], strides=2), [(1, 2, 4, 4)]),
    (lambda nn: nn.Fold([3, 3], [2, 2]), [(1, 8, 4)]),
]


def _run_layer(real_paddle, build, shapes, call=None):
    mine, theirs = _pair(real_paddle, build)
    arrays = [r(*s) for s in shapes]
    ins_o = [ours.to_tensor(a, stop_gradient=False) for a in arrays]
    ins_t = [real_paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    out_o, out_t = (call or (lambda m, *xs: m(*xs)))(mine, *ins_o), (call or (lambda m, *xs: m(*xs)))(theirs, *ins_t)
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-4, atol=1e-5)
    w = r(*out_o.shape)
    (out_o * ours.to_tensor(w)).sum().backward()
    (out_t * real_paddle.to_tensor(w)).sum().backward()
    for a, b in zip(ins_o, ins_t, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    their_grads = {n: p.grad.numpy() for n, p in theirs.named_parameters()}
    assert sorted(their_grads) == sorted(n for n, _ in mine.named_parameters())
    for name, p in mine.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), their_grads[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("build,shapes", LAYERS)
def test_layers_match_paddle(real_paddle, build, shapes):
    _run_layer(real_paddle, lambda P: build(P.nn), shapes)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_transformer_decoder_matches_paddle(real_paddle, normalize_before):
    def build(P):
        layer = P.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, normalize_before=normalize_before)
        return P.nn.TransformerDecoder(layer, 2, P.nn.LayerNorm(8))

    mask = np.tril(np.ones((3, 3), dtype=bool))[None, None]

    def call(m, tgt, memory):
        P = ours if isinstance(tgt, ours.Tensor) else real_paddle
        return m(tgt, memory, tgt_mask=P.to_tensor(mask))

    _run_layer(real_paddle, build, [(2, 3, 8), (2, 5, 8)], call)


def test_transformer_matches_paddle(real_paddle):
    def build(P):
        return P.nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, activation="gelu")

    def call(m, src, tgt):
        return m(src, tgt, tgt_mask=m.generate_square_subsequent_mask(3))

    _run_layer(real_paddle, build, [(2, 4, 8), (2, 3, 8)], call)
    mask = build(ours).generate_square_subsequent_mask(3).numpy()
    np.testing.assert_array_equal(mask, build(real_paddle).generate_square_subsequent_mask(3).numpy())


def test_transformer_rejects_bad_config():
    with pytest.raises(ValueError, match="activation"):
        ours.nn.TransformerDecoderLayer(8, 2, 16, activation="tanh")
    with pytest.raises(ValueError, match="1 or 3 entries"):
        ours.nn.TransformerDecoderLayer(8, 2, 16, weight_attr=[None, None])
    layer = ours.nn.TransformerDecoderLayer(8, 2, 16, weight_attr=[None, ours.ParamAttr(learning_rate=0.5), None])
    assert layer.cross_attn.q_proj.weight.optimize_attr["learning_rate"] == 0.5
    assert layer.self_attn.q_proj.weight.optimize_attr["learning_rate"] == 1.0
