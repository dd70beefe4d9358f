"""A Paddle script that, after some ordinary work, reaches an API paddlectl does not have (graph
learning, quantization and IPU APIs, which paddlectl has no plan for yet). argv[1] picks how
the script reaches it: a submodule import, an attribute of paddle, a name imported from a
paddle module, or a Tensor method."""

import sys

import paddle

x = paddle.rand([4, 3])
print("sum before the missing API:", float(x.sum()) > 0)

mode = sys.argv[1]
if mode == "module":
    from paddle.quantization import config as quant_config  # MISSING

    quant_config.QuantConfig(None, None)
elif mode == "attribute":
    pooled = paddle.geometric.segment_sum(x, paddle.to_tensor([0, 0, 1, 1]))  # MISSING
elif mode == "name":
    from paddle.static import ipu_shard_guard  # MISSING

    print(ipu_shard_guard)
elif mode == "method":
    x.geometric_(0.5)  # MISSING
print("not reached")
