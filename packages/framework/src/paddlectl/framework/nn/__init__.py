"""``paddle.nn``: layers, containers, initialisers and the functional API.

Each layer module lists its public names in ``__all__``; they are re-exported here.
"""

from ..optimizer.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue  # noqa: F401
from . import functional, initializer, utils
from .layer import loss  # noqa: F401 - Paddle exposes the loss layers as paddle.nn.loss too
from .layer.activation import *  # noqa: F403
from .layer.base import Layer, ParamAttr
from .layer.common import *  # noqa: F403
from .layer.containers import *  # noqa: F403
from .layer.conv import *  # noqa: F403
from .layer.conv1d_transpose import *  # noqa: F403
from .layer.distance import *  # noqa: F403
from .layer.dropout import *  # noqa: F403
from .layer.embedding import *  # noqa: F403
from .layer.loss import *  # noqa: F403
from .layer.norm import *  # noqa: F403
from .layer.padding import *  # noqa: F403
from .layer.parameter_dict import *  # noqa: F403
from .layer.patches import *  # noqa: F403
from .layer.pool import *  # noqa: F403
from .layer.pool3d import *  # noqa: F403
from .layer.regularization import *  # noqa: F403
from .layer.resize import *  # noqa: F403
from .layer.rnn import *  # noqa: F403
from .layer.spectral_norm import *  # noqa: F403
from .layer.transformer import *  # noqa: F403
from .layer.transformer_decoder import *  # noqa: F403
