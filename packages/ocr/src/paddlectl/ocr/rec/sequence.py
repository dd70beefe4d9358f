"""The recogniser's neck and head (PaddleOCR's ``SequenceEncoder`` and ``CTCHead``): the backbone's
[B, C, 1, W] map becomes a sequence of W columns, optionally read in context by a two-layer
bidirectional LSTM (CRNN), and each column is classified over blank + dictionary (+ space).

The head returns logits in every mode, as the framework's tasks do: the CTC loss takes logits,
the trainer's evaluation loss is the training loss, and serving applies the softmax
(``postprocess``), so the exported model and the trained one give the same numbers."""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError, ShapeError
from paddlectl.framework.optimizer.regularizer import L2Decay


class Im2Seq(nn.Layer):
    """[B, C, 1, W] -> [B, W, C]."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.out_channels = in_channels

    def forward(self, x):
        if x.shape[2] != 1:
            raise ShapeError(
                f"the recogniser's backbone left height {x.shape[2]}, the sequence needs 1; use 32 or 48 pixel "
                "lines (RecResizeImg.image_shape) with MobileNetV3 small_stride [1, 2, 2, 2]"
            )
        # a reshape rather than squeeze: it has an ONNX form, so SVTR recognisers export to ONNX
        return paddle.transpose(paddle.reshape(x, [x.shape[0], x.shape[1], x.shape[3]]), [0, 2, 1])


class EncoderWithRNN(nn.Layer):
    """Two stacked bidirectional LSTM layers; out_channels = 2 * hidden_size.

    ``shortcut`` also hands the head the columns themselves (out_channels = in_channels +
    2 * hidden_size): CTC's gradient then reaches the convolutions directly, as in Rosetta, instead
    of only through the LSTM, whose small initial outputs otherwise keep the model on the all-blank
    plateau for hundreds of steps; the LSTM's context is added as it learns."""

    def __init__(self, in_channels: int, hidden_size: int, shortcut: bool = False) -> None:
        super().__init__()
        self.shortcut = bool(shortcut)
        self.out_channels = hidden_size * 2 + (in_channels if self.shortcut else 0)
        self.lstm = nn.LSTM(in_channels, hidden_size, direction="bidirect", num_layers=2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return paddle.concat([x, out], axis=-1) if self.shortcut else out


class SequenceEncoder(nn.Layer):
    """``encoder_type`` reshape (SVTR: the columns as they are) or rnn (CRNN: a BiLSTM over them,
    ``shortcut`` adding the columns beside its output)."""

    def __init__(
        self, in_channels: int, encoder_type: str = "rnn", hidden_size: int = 48, shortcut: bool = False
    ) -> None:
        super().__init__()
        self.encoder_reshape = Im2Seq(in_channels)
        if shortcut and encoder_type != "rnn":
            raise ConfigError("SequenceEncoder.shortcut goes with encoder_type rnn; remove it or use rnn")
        if encoder_type == "reshape":
            self.encoder = None
        elif encoder_type == "rnn":
            self.encoder = EncoderWithRNN(in_channels, hidden_size, shortcut)
        else:
            raise ConfigError(f"SequenceEncoder.encoder_type is {encoder_type!r}; choose rnn or reshape")
        self.out_channels = self.encoder.out_channels if self.encoder is not None else in_channels

    def forward(self, x):
        x = self.encoder_reshape(x)
        return self.encoder(x) if self.encoder is not None else x


class CTCHead(nn.Layer):
    """Per-column class logits [B, T, out_channels]; ``fc_decay`` is an L2 penalty on the layer's
    weights (PaddleOCR's key), ``mid_channels`` adds a hidden layer."""

    def __init__(self, in_channels: int, out_channels: int, fc_decay: float = 0.0004, mid_channels: int | None = None):
        super().__init__()
        decay = nn.ParamAttr(regularizer=L2Decay(float(fc_decay)))
        if mid_channels is None:
            self.fc = nn.Linear(in_channels, out_channels, weight_attr=decay, bias_attr=decay)
        else:
            self.fc = nn.Sequential(
                nn.Linear(in_channels, mid_channels, weight_attr=decay, bias_attr=decay),
                nn.Linear(mid_channels, out_channels, weight_attr=decay, bias_attr=decay),
            )
        self.out_channels = out_channels

    def forward(self, x):
        return self.fc(x)
