"""Reports, as JSON on stdout, what a script sees when run: its argv, __name__, sys.path[0], which
module `import paddle` gave it, and whether a sibling module's paddle classes are the same
objects. argv[1] may ask it to fail in ways that are the script's own fault."""

import json
import sys

import paddle
import paddle.nn.functional as F
import train_regression  # a sibling file: the script's directory is on sys.path
from paddle import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return F.relu(self.fc2(x))  # a typo of the script's own (fc2), reached by "own-attribute"


def check_input(value):
    if value < 0:
        raise ValueError(f"value must be non-negative, got {value}")


mode = sys.argv[1] if len(sys.argv) > 1 else "report"
if mode == "report":
    report = {
        "argv": sys.argv,
        "name": __name__,
        "path0": sys.path[0],
        "paddle_name": paddle.__name__,
        "paddle_file": paddle.__file__,
        "functional_name": F.__name__,
        "same_layer_class": isinstance(train_regression.Regressor(), nn.Layer),
        "tensor_is_paddle_tensor": isinstance(paddle.to_tensor([1.0]), paddle.Tensor),
    }
    print(json.dumps(report))
elif mode == "own-attribute":
    Net()(paddle.rand([2, 3]))
elif mode == "value":
    check_input(-1)
elif mode == "shape":
    paddle.matmul(paddle.rand([2, 3]), paddle.rand([4, 5]))
elif mode == "exit":
    sys.exit(int(sys.argv[2]))
