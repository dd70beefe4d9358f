"""``paddle.text``: decoding for sequence-tagging models (Paddle's dataset downloaders are left out:
no network at run time).

``viterbi_decode``/``ViterbiDecoder`` are Paddle's; ``linear_chain_crf`` (a CRF's negative
log-likelihood, with gradient) and ``crf_decoding`` are Paddle's classic CRF op pair, on the same
kernels, for training a tagger and decoding it in an exported program.
"""

from __future__ import annotations

from .core.tensor import Tensor
from .errors import DTypeError
from .nn.layer.base import Layer
from .ops.crf import crf_decoding, linear_chain_crf, viterbi_decode

__all__ = ["ViterbiDecoder", "crf_decoding", "linear_chain_crf", "viterbi_decode"]


class ViterbiDecoder(Layer):
    """Paddle's decoder layer: ``forward(potentials, lengths)`` -> (scores, paths) under ``transitions``."""

    def __init__(self, transitions, include_bos_eos_tag=True, name=None):
        super().__init__()
        if not isinstance(transitions, Tensor):
            raise DTypeError(f"ViterbiDecoder: transitions must be a Tensor, got {type(transitions).__name__}")
        self.transitions = transitions
        self.include_bos_eos_tag = bool(include_bos_eos_tag)

    def forward(self, potentials, lengths):
        return viterbi_decode(potentials, self.transitions, lengths, self.include_bos_eos_tag)
