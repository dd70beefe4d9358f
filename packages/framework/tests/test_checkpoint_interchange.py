"""Checkpoints interchange with real PaddlePaddle by key: parameter names follow Paddle's scheme."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paddlectl.framework as paddle

SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import {module} as paddle
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.BatchNorm1D(3), paddle.nn.Linear(3, 2))
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    if sys.argv[2] == "save":
        model.set_state_dict({{k: v for k, v in np.load(sys.argv[3]).items()}})
        x = paddle.to_tensor(np.linspace(-1, 1, 20, dtype="float32").reshape(5, 4))
        model(x).sum().backward()
        opt.step()
        paddle.save(model.state_dict(), sys.argv[1] + ".pdparams")
        paddle.save(opt.state_dict(), sys.argv[1] + ".pdopt")
    else:
        model.set_state_dict(paddle.load(sys.argv[1] + ".pdparams"))
        opt.set_state_dict(paddle.load(sys.argv[1] + ".pdopt"))
        state = opt.state_dict()
        np.savez(sys.argv[3], **{{k: np.asarray(v) for k, v in state.items() if k != "LR_Scheduler"}})
    """
)


def test_parameter_names_follow_paddle():
    layer = paddle.nn.BatchNorm2D(3)
    scope = layer.full_name()
    assert scope.startswith("batch_norm2d_")
    assert [p.name for p in layer.parameters()] == [f"{scope}.w_0", f"{scope}.b_0", f"{scope}.w_1", f"{scope}.w_2"]
    assert paddle.nn.PReLU().full_name().startswith("p_re_lu_")


def test_paddle_optimizer_checkpoint_loads_by_key(real_paddle, tmp_path):
    init = {
        k: v.numpy()
        for k, v in paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.BatchNorm1D(3), paddle.nn.Linear(3, 2))
        .state_dict()
        .items()
    }
    np.savez(tmp_path / "init.npz", **init)
    prefix = str(tmp_path / "ckpt")
    for module, mode, extra in [
        ("paddle", "save", tmp_path / "init.npz"),
        ("paddlectl.framework", "load", tmp_path / "ours.npz"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT.format(module=module), prefix, mode, str(extra)],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = real_paddle.load(prefix + ".pdopt")
    ours = np.load(tmp_path / "ours.npz")
    keys = {k for k in theirs if k != "LR_Scheduler"}
    if not keys:
        pytest.fail("paddle saved no accumulators")
    assert keys == set(ours.files)
    for key in keys:
        np.testing.assert_allclose(ours[key], np.asarray(theirs[key]), rtol=1e-6, err_msg=key)
