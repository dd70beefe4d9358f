"""BertModel: configuration checks, masking, and export with a symbolic batch and sequence length
whose predictor runs the fused attention and equals the eager model on two shapes."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import inference
from paddlectl.framework.errors import CheckpointError, DataError
from paddlectl.framework.jit import InputSpec
from paddlectl.nlp.encoder import BertConfig, BertModel, input_spec

TINY = dict(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
            max_position_embeddings=40)  # fmt: skip


@pytest.fixture(scope="module")
def model():
    paddle.seed(7)
    m = BertModel(BertConfig(**TINY))
    m.eval()
    return m


def _ids(rng, batch, length):
    return rng.integers(1, TINY["vocab_size"], (batch, length)).astype(np.int64)


def test_padding_does_not_change_the_real_tokens_outputs(model):
    rng = np.random.default_rng(0)
    short, longer = _ids(rng, 1, 5), _ids(rng, 1, 9)
    batch = np.zeros((2, 9), np.int64)
    batch[0, :5], batch[1] = short[0], longer[0]
    mask = (batch != 0).astype(np.int64)
    alone, pooled_alone = model(paddle.to_tensor(short))
    padded, pooled = model(paddle.to_tensor(batch), attention_mask=paddle.to_tensor(mask))
    np.testing.assert_allclose(padded.numpy()[0, :5], alone.numpy()[0], atol=1e-5)
    np.testing.assert_allclose(pooled.numpy()[0], pooled_alone.numpy()[0], atol=1e-5)
    implicit, _ = model(paddle.to_tensor(batch))  # no mask: the pad id's positions are masked
    np.testing.assert_allclose(implicit.numpy(), padded.numpy(), atol=1e-6)


def test_hidden_states_are_the_embeddings_then_each_layer(model):
    ids = paddle.to_tensor(_ids(np.random.default_rng(1), 2, 6))
    seq, pooled, states = model(ids, output_hidden_states=True)
    assert len(states) == 3 and all(s.shape == [2, 6, 32] for s in states)
    np.testing.assert_array_equal(states[-1].numpy(), seq.numpy())
    np.testing.assert_allclose(states[0].numpy(), model.embeddings(ids).numpy(), atol=1e-6)


def test_a_training_step_lowers_a_loss_through_every_parameter():
    paddle.seed(3)
    m = BertModel(BertConfig(**TINY, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    optimizer = paddle.optimizer.Adam(learning_rate=1e-2, parameters=m.parameters())
    ids = paddle.to_tensor(_ids(np.random.default_rng(2), 4, 7))
    losses = []
    for _ in range(5):
        _, pooled = m(ids)
        loss = (pooled * pooled).mean()
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < losses[0]


def test_export_has_symbolic_batch_and_length_and_fused_attention(model, tmp_path):
    paddle.jit.save(
        model, tmp_path / "bert", input_spec=input_spec(), output_names=["sequence_output", "pooled_output"]
    )
    predictor = inference.create_predictor(inference.Config(str(tmp_path / "bert")))
    ops = [op.name for op in predictor.optimized_program.block.ops]
    assert ops.count("attention") == TINY["num_hidden_layers"] and "softmax" not in ops
    rng = np.random.default_rng(4)
    for batch, length in ((1, 7), (3, 19)):
        ids = _ids(rng, batch, length)
        types = rng.integers(0, 2, ids.shape).astype(np.int64)
        mask = np.ones_like(ids)
        mask[-1, length // 2 :] = 0
        served = predictor.run([ids, types, mask])
        eager = model(*(paddle.to_tensor(a) for a in (ids, types, mask)))
        for got, want in zip(served, eager, strict=True):
            assert got.shape == tuple(want.shape)
            np.testing.assert_allclose(got, want.numpy(), atol=2e-5)


def test_ids_alone_export_with_two_free_dims(model, tmp_path):
    paddle.jit.save(model, tmp_path / "ids", input_spec=[InputSpec([None, None], "int64", "input_ids")])
    predictor = inference.create_predictor(inference.Config(str(tmp_path / "ids")))
    ids = _ids(np.random.default_rng(5), 2, 11)
    ids[0, 8:] = 0  # padding: masked through the pad id, as in eager
    np.testing.assert_allclose(predictor.run([ids])[0], model(paddle.to_tensor(ids))[0].numpy(), atol=2e-5)
    with pytest.raises(DataError, match="feeds must start with input_ids"):
        input_spec(("attention_mask",))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"hidden_size": 30}, "not divisible"),
        ({"num_hidden_layers": 0}, "num_hidden_layers must be a positive int"),
        ({"hidden_act": "swish"}, "hidden_act must be one of"),
        ({"hidden_dropout_prob": 1.5}, r"hidden_dropout_prob must be in \[0, 1\)"),
        ({"pad_token_id": 50}, "pad_token_id must be an id below vocab_size"),
    ],
)
def test_bad_configurations_are_refused(overrides, message):
    with pytest.raises(CheckpointError, match=message):
        BertConfig(**{**TINY, **overrides})


def test_config_from_dict_ignores_other_keys_and_refuses_relative_positions():
    assert BertConfig.from_dict({**TINY, "architectures": ["BertModel"], "use_cache": True}).hidden_size == 32
    with pytest.raises(CheckpointError, match="position_embedding_type 'relative_key'"):
        BertConfig.from_dict({**TINY, "position_embedding_type": "relative_key"})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.zeros((2, 3), np.int64),), "must be a \\[batch, seq\\] tensor"),
        ((paddle.to_tensor(np.zeros((2, 3), np.float32)),), "must be integer ids"),
        ((paddle.to_tensor(np.ones((1, 41), np.int64)),), "41 tokens is longer than the model's 40 positions"),
        ((paddle.to_tensor(np.ones((2, 3), np.int64)), None, paddle.to_tensor(np.ones((2, 4), np.int64))), "attention_mask must be"),
    ],
)  # fmt: skip
def test_bad_inputs_are_one_line_data_errors(model, args, message):
    with pytest.raises(DataError, match=message):
        model(*args)
