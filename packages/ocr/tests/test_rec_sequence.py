"""The CRNN neck's shortcut (``SequenceEncoder: {encoder_type: rnn, shortcut: true}``): the head is
handed the columns beside the BiLSTM's output, and a few steps of it lower the CTC loss."""

import numpy as np
import pytest
from _ocr_lines import few_step_losses, rec_config, write_lines

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.ocr.rec.sequence import SequenceEncoder
from paddlectl.ocr.rec.task import RecTask


def test_the_shortcut_puts_the_columns_beside_the_lstm_output():
    paddle.seed(0)
    neck = SequenceEncoder(8, encoder_type="rnn", hidden_size=4, shortcut=True)
    x = np.random.default_rng(0).normal(size=(2, 8, 1, 5)).astype("float32")
    out = neck(paddle.to_tensor(x)).numpy()
    assert neck.out_channels == 16 and out.shape == (2, 5, 16)
    np.testing.assert_array_equal(out[..., :8], x[:, :, 0, :].transpose(0, 2, 1))
    plain = SequenceEncoder(8, encoder_type="rnn", hidden_size=4)
    plain.set_state_dict(neck.state_dict())
    np.testing.assert_allclose(out[..., 8:], plain(paddle.to_tensor(x)).numpy(), rtol=1e-6)


def test_the_shortcut_needs_the_rnn():
    with pytest.raises(ConfigError, match="shortcut goes with encoder_type rnn"):
        SequenceEncoder(8, encoder_type="reshape", shortcut=True)


def test_a_few_steps_of_the_shortcut_crnn_lower_the_ctc_loss(tmp_path):
    config = rec_config(tmp_path, write_lines(tmp_path, n=8), tmp_path / "out")
    config["Architecture"]["Neck"]["shortcut"] = True
    paddle.seed(0)
    task = RecTask()
    task.check_config(config)
    losses = few_step_losses(task, config, 6)
    assert all(np.isfinite(losses))
    assert np.mean(losses[-2:]) < 0.7 * losses[0], losses
