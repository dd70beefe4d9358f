"""Pretrained weights are never downloaded: a model is built untrained, or from a local file.

``factory`` writes Paddle's ``name(pretrained=False, **kwargs)`` constructors (``resnet50``,
``densenet121``...) from one place, so each variant is a line naming what it fixes.
"""

from ...errors import CheckpointError, ConfigError


def refuse_download(model: str, pretrained: bool) -> None:
    if pretrained:
        raise CheckpointError(
            f"{model}(pretrained=True): paddlectl downloads nothing at run time; build the model with "
            "pretrained=False and load a local file with model.set_state_dict(paddle.load(path))"
        )


def factory(name: str, build, **fixed):
    """``name(pretrained=False, **kwargs)`` returning ``build(**fixed, **kwargs)``; a caller who passes
    one of the ``fixed`` arguments gets a ConfigError (Paddle would overwrite it without a word)."""

    def make(pretrained: bool = False, **kwargs):
        refuse_download(name, pretrained)
        clash = sorted(set(fixed) & set(kwargs))
        if clash:
            settled = ", ".join(f"{k}={fixed[k]!r}" for k in clash)
            raise ConfigError(
                f"{name}: {settled} is what this variant is; build {build.__name__}(...) for other values"
            )
        return build(**fixed, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``paddle.vision.models.{name}``: {build.__name__} with {fixed or 'its defaults'}, untrained."
    return make
