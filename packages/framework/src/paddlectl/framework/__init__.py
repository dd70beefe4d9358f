"""paddlectl.framework: PaddlePaddle's dynamic-graph API on NumPy and Numba.

``import paddlectl.framework as paddle`` and write Paddle code.
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys
from importlib.metadata import version

from . import (
    _blas_env,  # noqa: F401, I001 - first, before anything loads NumPy (and OpenBLAS)
    amp,  # noqa: F401 - paddle.amp
    audio,  # noqa: F401 - paddle.audio (soundfile/soxr imported only by its file I/O)
    autograd,  # noqa: F401 - paddle.autograd
    device,  # noqa: F401 - paddle.device
    distributed,  # noqa: F401 - paddle.distributed (mpi4py imported only when a process communicates)
    distribution,  # noqa: F401 - paddle.distribution
    fft,  # noqa: F401 - paddle.fft
    hapi,
    inference,
    io,
    jit,
    linalg,  # noqa: F401 - paddle.linalg
    metric,
    nn,
    onnx,  # noqa: F401 - fills each op record's ONNX export rule
    optimizer,
    signal,  # noqa: F401 - paddle.signal
    sparse,  # noqa: F401 - paddle.sparse (also attaches Tensor.to_sparse_coo/to_sparse_csr)
    static,
    text,  # noqa: F401 - paddle.text
    utils,
    vision,
)
from . import ops as _ops  # declares every op and attaches the Tensor methods
from .core.allocator import retain_freed_memory as _retain_freed_memory
from .core.autograd import enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .core.dtype import (
    bfloat16,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)
from .core.dtype import (
    bool_ as bool,  # noqa: A004 - Paddle's name
)
from .core.tensor import Parameter, Tensor
from .device import (  # noqa: F401 - Paddle's public names
    CPUPlace,
    CUDAPinnedPlace,
    CUDAPlace,
    CustomPlace,
    IPUPlace,
    XPUPlace,
    get_device,
    is_compiled_with_cinn,
    is_compiled_with_cuda,
    is_compiled_with_custom_device,
    is_compiled_with_distribute,
    is_compiled_with_ipu,
    is_compiled_with_rocm,
    is_compiled_with_xpu,
    set_device,
)
from .distributed import DataParallel  # noqa: F401 - paddle.DataParallel
from .dtype_info import finfo, iinfo  # noqa: F401
from .flags import get_flags, set_flags  # noqa: F401
from .hapi import Model, callbacks
from .hapi.model_summary import flops, summary  # noqa: F401
from .io.reader import batch  # noqa: F401 - paddle.batch
from .modes import disable_static, enable_static, in_dynamic_mode  # noqa: F401
from .namespaces import Namespace as _Namespace
from .nn.layer.base import ParamAttr
from .nn.lazy_init import LazyGuard  # noqa: F401
from .nn.parameter import create_parameter  # noqa: F401
from .ops.activation import sigmoid, softmax
from .ops.constructors import as_tensor
from .ops.creation import (
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    normal,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randperm,
    standard_normal,
    to_tensor,
    uniform,
    zeros,
    zeros_like,
)
from .ops.einsum import einsum  # noqa: F401
from .ops.elementwise import BINARY as _BINARY
from .ops.elementwise import UNARY as _UNARY
from .ops.elementwise import cast, clip, pow, scale
from .ops.index import (  # noqa: F401 - Paddle's public names
    gather,
    gather_nd,
    index_select,
    masked_fill,
    masked_select,
    nonzero,
    put_along_axis,
    scatter,
    scatter_nd_add,
    take_along_axis,
    where,
)
from .ops.linalg import bmm, dot, matmul, mm, t
from .ops.norm import group_norm, layer_norm
from .ops.random import get_rng_state, seed, set_rng_state
from .ops.reduce import (  # noqa: F401 - Paddle's public names
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    logsumexp,
    max,
    mean,
    min,
    nanmean,
    nansum,
    std,
    sum,
    var,
)
from .ops.scan import cumsum, prod
from .ops.shape import (  # noqa: F401 - Paddle's public names
    broadcast_to,
    chunk,
    concat,
    expand,
    expand_as,
    flatten,
    flip,
    reshape,
    roll,
    slice,
    split,
    squeeze,
    stack,
    strided_slice,
    tile,
    transpose,
    tril,
    triu,
    unbind,
    unsqueeze,
)
from .ops.sorting import argsort, sort, topk  # noqa: F401 - Paddle's public names
from .ops.tensor_api import assign, is_tensor, numel, shape  # noqa: F401
from .optimizer import regularizer  # noqa: F401
from .serialization import load, save
from .static.static_mode import dygraph_guard as _dygraph_guard

_TENSOR_SUBMODULES = (
    "array", "attribute", "creation", "einsum", "linalg", "logic", "manipulation", "math", "ops", "random",
    "search", "stat", "to_string",
)  # fmt: skip
"""Paddle's modules inside ``paddle.tensor``; each name they hold is at the top too."""

_retain_freed_memory()
globals().update(_BINARY)
globals().update(_UNARY)
for _info in _pkgutil.iter_modules(_ops.__path__):  # each op family lists its paddle.* names in TOP_LEVEL
    _family = _importlib.import_module(f"{_ops.__name__}.{_info.name}")
    globals().update({_n: getattr(_family, _n) for _n in getattr(_family, "TOP_LEVEL", ())})

# Paddle's namespaces of names defined elsewhere (nothing copied); ``import paddle.tensor`` finds them too
tensor = _Namespace(f"{__name__}.tensor", [globals()], _TENSOR_SUBMODULES, call=as_tensor)
framework = _Namespace(f"{__name__}.framework", [globals()])
base = _Namespace(
    f"{__name__}.base",
    [vars(static), globals()],
    dygraph=_Namespace(f"{__name__}.base.dygraph", [], guard=_dygraph_guard),
    framework=framework,
)
_sys.modules.update({m.__name__: m for m in (tensor, framework, base, base.dygraph)})

__version__ = version("paddlectl-framework")
