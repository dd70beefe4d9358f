"""``paddle.sparse.nn.BatchNorm``: Paddle's is a BatchNorm1D over the stored values [nnz, C] of a
channels-last COO tensor, so the statistics count stored sites only."""

from __future__ import annotations

from ...nn.layer.norm import BatchNorm1D
from ..tensor import require_sparse


class BatchNorm(BatchNorm1D):
    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NDHWC", use_global_stats=None, name=None):  # fmt: skip
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, "NCL", use_global_stats)

    def forward(self, x):
        require_sparse(x)
        return x.with_values(super().forward(x.values()))


class SyncBatchNorm(BatchNorm):
    """One process here, so synchronising statistics across devices is BatchNorm itself (Paddle's
    signature: no use_global_stats, and a data_format that the values' [nnz, C] layout ignores)."""

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):  # fmt: skip
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr)
