"""seg.semantic's config checks (before any data is read) and its warm-up + polynomial schedule."""

import copy
from pathlib import Path

import pytest
import yaml

from paddlectl.framework.errors import ConfigError
from paddlectl.seg.models import PPLiteSeg
from paddlectl.seg.optim import build_optimizer
from paddlectl.seg.task import SemanticSegTask

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TASK = SemanticSegTask()


@pytest.fixture(scope="module")
def config():
    return yaml.safe_load((CONFIGS / "pp_liteseg_scenes.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["pp_liteseg_scenes.yml", "unet_scenes.yml"])
def test_the_shipped_configs_pass_their_checks(name):
    TASK.check_config(yaml.safe_load((CONFIGS / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["Architecture"].update(cm_out_chs=64), "did you mean 'cm_out_ch'"),
        (lambda c: c["Train"]["dataset"].pop("train_path"), "Train.dataset needs train_path"),
        (
            lambda c: c["Eval"]["dataset"]["transforms"].insert(0, {"RandomHorizontalFlip": {}}),
            "evaluation must repeat",
        ),
        (lambda c: c["Eval"].update(test_config={"is_slid": True}), "did you mean 'is_slide'"),
        (lambda c: c.pop("Export"), "set Export.input_shape"),
        (lambda c: c["Metric"].update(main_indicator="mIoU"), "use one of miou"),
        (lambda c: c["Loss"].update(coef=[1, 1]), "one weight per entry"),
        (lambda c: c["Architecture"].update(num_classes=1), "at least 2 classes"),
    ],
)
def test_config_mistakes_are_named_before_any_data_is_read(config, change, message):
    broken = copy.deepcopy(config)
    change(broken)
    with pytest.raises(ConfigError, match=message):
        TASK.check_config(broken)


def test_the_learning_rate_warms_up_then_decays_polynomially_to_end_lr():
    model = PPLiteSeg(2, backbone={"base": 8, "layers": [1, 1, 1]}, cm_out_ch=8, arm_out_chs=[8, 8, 8],
                      seg_head_inter_chs=[8, 8, 8])  # fmt: skip
    section = {
        "name": "Momentum",
        "lr": {"learning_rate": 0.1, "power": 0.9, "warmup_iters": 10, "warmup_start_lr": 0.0},
    }
    optimizer, scheduler = build_optimizer(section, model.parameters(), total_steps=110)
    rates = []
    for _ in range(111):
        rates.append(optimizer.get_lr())
        scheduler.step()
    assert rates[0] == pytest.approx(0.0) and rates[5] == pytest.approx(0.05) and rates[10] == pytest.approx(0.1)
    assert rates[60] == pytest.approx(0.1 * (1 - 50 / 100) ** 0.9)  # PaddleSeg's (1 - step / decay_steps) ** power
    assert rates[110] == pytest.approx(0.0, abs=1e-12)
