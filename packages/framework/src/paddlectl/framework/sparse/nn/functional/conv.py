"""``paddle.sparse.nn.functional`` convolutions on channels-last COO tensors.

Each kernel tap multiplies the input rows its rulebook pairs name by that tap's [C_in, C_out]
weight and index-adds them into the output rows: gather, matmul and index-add are ops, so x's
values, the weight and the bias all get gradients from the tape. Paddle's weight layout:
[*kernel, C_in, C_out]."""

from __future__ import annotations

from ....core.tensor import Tensor
from ....errors import LayoutError, ShapeError
from ....ops._window import as_tuple
from ....ops.creation import zeros
from ....ops.gather_scatter import index_add
from ....ops.index import index_select
from ....ops.linalg import matmul
from ....ops.shape import reshape
from ...tensor import SparseCooTensor
from . import rulebook

_LAYOUT = {2: "NHWC", 3: "NDHWC"}


def channels_last_coo(op: str, x, dims: int, data_format: str) -> SparseCooTensor:
    """x checked as a COO tensor of N, dims spatial dims indexed and C dense."""
    if data_format != _LAYOUT[dims]:
        raise ShapeError(f"{op}: sparse tensors are channels-last, data_format must be {_LAYOUT[dims]!r}")
    if not isinstance(x, SparseCooTensor):
        raise LayoutError(f"{op}: x must be a COO tensor (.to_sparse_coo({dims + 1}) of an {_LAYOUT[dims]} tensor)")
    if x.ndim != dims + 2 or x.sparse_dim() != dims + 1:
        raise ShapeError(
            f"{op}: x must be {_LAYOUT[dims]} ({dims + 2}-D) with its first {dims + 1} dims indexed, got shape "
            f"{x.shape} with sparse_dim {x.sparse_dim()}"
        )
    return x


def window_padding(op: str, padding, dims: int) -> tuple[int, ...]:
    """An int, one int per spatial dim, or equal before/after pairs; Paddle's sparse kernels take
    no 'SAME'/'VALID' algorithm (its wrapper silently drops it), so a string is refused here."""
    if isinstance(padding, str):
        raise ShapeError(f"{op}: give padding as ints (Paddle's sparse kernels ignore {padding!r}), e.g. padding=1")
    if not isinstance(padding, int) and len(padding) == 2 * dims:
        before, after = list(padding)[0::2], list(padding)[1::2]
        if before != after:
            raise ShapeError(f"{op}: sparse windows pad both sides alike, got before {before} and after {after}")
        padding = before
    return as_tuple(op, "padding", padding, dims)


def _conv(op, x, weight, bias, stride, padding, dilation, groups, data_format, dims: int, subm: bool):
    x = channels_last_coo(op, x, dims, data_format)
    if groups != 1:
        raise ShapeError(f"{op}: sparse convolutions take groups=1 only (as Paddle's), got {groups}")
    if weight.ndim != dims + 2 or weight.shape[-2] != x.shape[-1]:
        raise ShapeError(f"{op}: weight must be [*kernel ({dims}), C_in={x.shape[-1]}, C_out], got {weight.shape}")
    kernel = weight.shape[:dims]
    geometry = [as_tuple(op, "stride", stride, dims), window_padding(op, padding, dims),
                as_tuple(op, "dilation", dilation, dims)]  # fmt: skip
    indices, spatial = x._indices, x.shape[1:-1]
    if dims == 2:  # a 2-D convolution is a 3-D one of depth 1, as Paddle runs it
        indices = indices[[0, 0, 1, 2]] * [[1], [0], [1], [1]]
        kernel, spatial = [1, *kernel], [1, *spatial]
        geometry = [(base, *g) for base, g in zip((1, 0, 1), geometry, strict=True)]
    book = rulebook.build(op, indices, spatial, kernel, *geometry, subm=subm)
    taps = reshape(weight, [-1, *weight.shape[-2:]])
    values = x.values()
    out = zeros([book.out_indices.shape[1], weight.shape[-1]], values.dtype)
    for tap, rows_in, rows_out in book.pairs:
        out = index_add(out, Tensor(rows_out), 0, matmul(index_select(values, Tensor(rows_in)), taps[tap]))
    if bias is not None:
        out = out + bias
    out_indices, out_spatial = book.out_indices, book.out_spatial
    if dims == 2:
        out_indices, out_spatial = out_indices[[0, 2, 3]], out_spatial[1:]
    return SparseCooTensor(out_indices, out, [x.shape[0], *out_spatial, weight.shape[-1]], coalesced=True)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NHWC", name=None):
    return _conv("sparse conv2d", x, weight, bias, stride, padding, dilation, groups, data_format, 2, False)


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NDHWC", name=None):
    return _conv("sparse conv3d", x, weight, bias, stride, padding, dilation, groups, data_format, 3, False)


def subm_conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NHWC", key=None,
                name=None):  # fmt: skip
    """Submanifold: the output keeps x's sites and shape (the kernel is centred, so ``padding`` does
    not matter); ``key`` names Paddle's rulebook cache, which is rebuilt on each call here."""
    return _conv("sparse subm_conv2d", x, weight, bias, stride, padding, dilation, groups, data_format, 2, True)


def subm_conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NDHWC", key=None,
                name=None):  # fmt: skip
    """As ``subm_conv2d``, over depth too."""
    return _conv("sparse subm_conv3d", x, weight, bias, stride, padding, dilation, groups, data_format, 3, True)


subm_conv2d_igemm = subm_conv2d  # Paddle's implicit-GEMM CUDA kernel of the same convolution
subm_conv3d_igemm = subm_conv3d
