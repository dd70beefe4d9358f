"""Pretrained weights are never downloaded: a model is built untrained, or from a local file."""

from ...errors import CheckpointError


def refuse_download(model: str, pretrained: bool) -> None:
    if pretrained:
        raise CheckpointError(
            f"{model}(pretrained=True): paddlectl downloads nothing at run time; build the model with "
            "pretrained=False and load a local file with model.set_state_dict(paddle.load(path))"
        )
