"""SVTR (PaddleOCR's ``SVTRNet``): a recogniser without recurrence. The line image becomes a grid of
patch tokens (two strided 3x3 convs, H/4 x W/4); mixing blocks attend either within a local window
(``Local``: nearby strokes make a character) or across the whole line (``Global``: characters
relate to each other); conv merging between the three stages halves the height and widens the
channels; the last stage pools to ``out_char_num`` columns for the CTC head.
``SVTR-tiny``: embed_dim [64, 128, 256], depth [3, 6, 3], num_heads [2, 4, 8], 6 Local + 6 Global."""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.nn import functional as F
from paddlectl.framework.nn.initializer import KaimingNormal, TruncatedNormal


def local_mask(height: int, width: int, window: tuple[int, int]) -> np.ndarray:
    """[1, 1, N, N] additive attention mask (N = height*width tokens): 0 where token j lies in the
    ``window`` (kh x kw) centred on token i, -inf elsewhere."""
    kh, kw = window
    rows, cols = np.divmod(np.arange(height * width), width)
    near = (np.abs(rows[:, None] - rows[None, :]) <= kh // 2) & (np.abs(cols[:, None] - cols[None, :]) <= kw // 2)
    return np.where(near, 0.0, -np.inf).astype("float32")[None, None]


class ConvBN(nn.Layer):
    """Conv 3x3 stride 2 (with a bias, as PaddleOCR's) -> BatchNorm -> GELU (the patch embedding's steps)."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2D(in_channels, out_channels, 3, 2, 1)
        self.norm = nn.BatchNorm2D(out_channels)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class Attention(nn.Layer):
    """Multi-head self-attention over the tokens; ``Local`` adds the window mask."""

    def __init__(self, dim: int, num_heads: int, mixer: str, hw: tuple[int, int], local_k, qkv_bias: bool) -> None:
        super().__init__()
        if dim % num_heads:
            raise ConfigError(f"SVTRNet: embed_dim {dim} is not divisible by num_heads {num_heads}")
        self.num_heads, self.head_dim, self.dim = num_heads, dim // num_heads, dim
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, dim * 3, bias_attr=None if qkv_bias else False)
        self.proj = nn.Linear(dim, dim)
        self.mask = None
        if mixer == "Local":
            self.register_buffer("mask", paddle.to_tensor(local_mask(*hw, tuple(local_k))), persistable=False)

    def forward(self, x):
        n = x.shape[1]
        qkv = paddle.transpose(self.qkv(x).reshape([-1, n, 3, self.num_heads, self.head_dim]), [2, 0, 3, 1, 4])
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = paddle.matmul(q, k, transpose_y=True)
        if self.mask is not None:
            attn = attn + self.mask
        out = paddle.matmul(F.softmax(attn, axis=-1), v)
        return self.proj(paddle.transpose(out, [0, 2, 1, 3]).reshape([-1, n, self.dim]))


class Block(nn.Layer):
    """A mixing block, post-norm as PaddleOCR's default (``prenorm: True`` there means norm after
    the residual sum): x = norm1(x + mixer(x)); x = norm2(x + mlp(x))."""

    def __init__(self, dim, num_heads, mixer, hw, local_k, mlp_ratio, qkv_bias, epsilon) -> None:
        super().__init__()
        if mixer not in ("Local", "Global"):
            raise ConfigError(f"SVTRNet.mixer entries must be Local or Global, got {mixer!r}")
        self.mixer = Attention(dim, num_heads, mixer, hw, local_k, qkv_bias)
        self.norm1 = nn.LayerNorm(dim, epsilon=epsilon)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))
        self.norm2 = nn.LayerNorm(dim, epsilon=epsilon)

    def forward(self, x):
        x = self.norm1(x + self.mixer(x))
        return self.norm2(x + self.mlp(x))


class SubSample(nn.Layer):
    """Patch merging: tokens back to a grid, 3x3 conv with stride (2, 1), LayerNorm."""

    def __init__(self, in_channels: int, out_channels: int, hw: tuple[int, int]) -> None:
        super().__init__()
        self.hw = hw
        self.conv = nn.Conv2D(
            in_channels, out_channels, 3, (2, 1), 1, weight_attr=nn.ParamAttr(initializer=KaimingNormal())
        )
        self.norm = nn.LayerNorm(out_channels)

    def forward(self, x):
        grid = paddle.transpose(x, [0, 2, 1]).reshape([-1, x.shape[2], *self.hw])
        return self.norm(paddle.transpose(paddle.flatten(self.conv(grid), 2), [0, 2, 1]))


def _check(name: str, value, length: int) -> list:
    if not isinstance(value, list | tuple) or len(value) != length:
        raise ConfigError(f"SVTRNet.{name} must be a list of {length}, got {value!r}")
    return list(value)


class SVTRNet(nn.Layer):
    """The SVTR backbone; output [B, out_channels, 1, out_char_num] for ``SequenceEncoder`` (reshape)."""

    def __init__(
        self,
        in_channels: int = 3,
        img_size=(32, 100),
        embed_dim=(64, 128, 256),
        depth=(3, 6, 3),
        num_heads=(2, 4, 8),
        mixer=("Local",) * 6 + ("Global",) * 6,
        local_mixer=((7, 11), (7, 11), (7, 11)),
        mlp_ratio: float = 4,
        qkv_bias: bool = True,
        epsilon: float = 1e-6,
        out_channels: int = 192,
        out_char_num: int = 25,
        last_drop: float = 0.1,
    ) -> None:
        super().__init__()
        height, width = _check("img_size", img_size, 2)
        if height % 16 or width % 4:
            raise ConfigError(f"SVTRNet.img_size {img_size} must have a height divisible by 16 and a width by 4")
        embed_dim, depth = _check("embed_dim", embed_dim, 3), _check("depth", depth, 3)
        num_heads, local_mixer = _check("num_heads", num_heads, 3), _check("local_mixer", local_mixer, 3)
        mixer = _check("mixer", mixer, sum(depth))
        self.img_size, self.out_channels = [height, width], out_channels
        self.patch_embed = nn.Sequential(
            ConvBN(in_channels, embed_dim[0] // 2), ConvBN(embed_dim[0] // 2, embed_dim[0])
        )
        hw = [(height // 4, width // 4), (height // 8, width // 4), (height // 16, width // 4)]
        self.pos_embed = self.create_parameter(
            [1, hw[0][0] * hw[0][1], embed_dim[0]], default_initializer=TruncatedNormal(std=0.02)
        )
        stages, start = [], 0
        for i in range(3):
            stages.append(
                nn.LayerList(
                    [
                        Block(embed_dim[i], num_heads[i], m, hw[i], local_mixer[i], mlp_ratio, qkv_bias, epsilon)
                        for m in mixer[start : start + depth[i]]
                    ]
                )
            )
            start += depth[i]
        self.stages = nn.LayerList(stages)
        self.merges = nn.LayerList([SubSample(embed_dim[i], embed_dim[i + 1], hw[i]) for i in range(2)])
        self.last_hw = hw[2]
        rows, cols = hw[2]
        # an even split is a plain average pool (the same numbers), which has an ONNX form
        even = cols % out_char_num == 0
        size = (rows, cols // out_char_num)
        self.pool = nn.AvgPool2D(size, size) if even else nn.AdaptiveAvgPool2D([1, out_char_num])
        self.last_conv = nn.Conv2D(embed_dim[2], out_channels, 1, bias_attr=False)
        self.act = nn.Hardswish()
        self.dropout = nn.Dropout(last_drop)

    def forward(self, x):
        if list(x.shape[2:]) != self.img_size:
            raise ConfigError(
                f"SVTRNet takes {self.img_size[0]}x{self.img_size[1]} lines, got {x.shape[2]}x{x.shape[3]}; "
                "make RecResizeImg.image_shape match Backbone.img_size"
            )
        x = paddle.transpose(paddle.flatten(self.patch_embed(x), 2), [0, 2, 1]) + self.pos_embed
        for i, blocks in enumerate(self.stages):
            for block in blocks:
                x = block(x)
            if i < 2:
                x = self.merges[i](x)
        grid = paddle.transpose(x, [0, 2, 1]).reshape([-1, x.shape[2], *self.last_hw])
        return self.dropout(self.act(self.last_conv(self.pool(grid))))
