"""Experiment configuration in the PaddleX/PaddleOCR style, shared by every suite and the CLI.

One YAML file per experiment with fixed top-level sections; ``-o Key.sub=value``
overrides whose values are parsed as YAML; unknown keys are refused with the
nearest valid key suggested, because a typo that is silently ignored costs a
training run.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError
from .utils.fileio import atomic_write


class _Loader(yaml.SafeLoader):
    """Safe YAML that also reads ``1e-3`` as a float (YAML 1.1 wants ``1.0e-3``; people write ``1e-3``)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def _parse_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader


OPEN = None
"""Marks a section whose keys belong to the task (architecture, loss...) and are checked by it."""

SCHEMA: dict[str, Any] = {
    "Global": {
        "task": str,
        "seed": int,
        "device": str,
        "output_dir": str,
        "epochs": int,
        "eval_interval": int,
        "log_interval": int,
        "save_interval": int,
        "pretrained_model": str,
        "amp": str,
        "amp_dtype": str,
        "gradient_merge_steps": int,
    },
    "Architecture": OPEN,
    "Loss": OPEN,
    "Optimizer": OPEN,
    "Train": OPEN,
    "Eval": OPEN,
    "Metric": OPEN,
    "PostProcess": OPEN,
    "Export": OPEN,
}


def _suggest(key: str, choices) -> str:
    close = difflib.get_close_matches(key, list(choices), n=3, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "valid keys: " + ", ".join(sorted(choices))


def _unknown(path: list[str], key: str, choices) -> ConfigError:
    where = ".".join([*path, key])
    return ConfigError(f"unknown config key {where!r}; {_suggest(key, choices)}")


def validate(config: Mapping[str, Any], schema: Mapping[str, Any] = SCHEMA) -> None:
    """Raise ConfigError for the first key the schema does not know or a value of the wrong type."""
    _validate(config, schema, [])


def _validate(node: Any, schema: Any, path: list[str]) -> None:
    if schema is OPEN:
        return
    if isinstance(schema, dict):
        if not isinstance(node, Mapping):
            raise ConfigError(f"config key {'.'.join(path) or '<root>'!r} must be a mapping, got {type(node).__name__}")
        for key, value in node.items():
            if key not in schema:
                raise _unknown(path, str(key), schema)
            _validate(value, schema[key], [*path, str(key)])
        return
    if node is not None and not isinstance(node, schema) and not (schema is float and isinstance(node, int)):
        raise ConfigError(
            f"config key {'.'.join(path)!r} must be {schema.__name__}, got {type(node).__name__} {node!r}"
        )


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``Key.sub=value`` into its key path and its YAML-parsed value."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
        raise ConfigError(f"malformed override {text!r}; write it as -o Section.key=value, e.g. -o Global.epochs=10")
    try:
        value = _parse_yaml(raw) if raw.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {text!r}: the value is not valid YAML ({exc.problem})") from None
    return key.strip().split("."), value


def apply_override(config: dict[str, Any], text: str, schema: Mapping[str, Any] = SCHEMA) -> None:
    """Set one ``Key.sub=value`` override in place, refusing keys that neither the config nor the schema has."""
    path, value = parse_override(text)
    node: Any = config
    node_schema: Any = schema
    for depth, key in enumerate(path):
        last = depth == len(path) - 1
        known = set(node) | (set(node_schema) if isinstance(node_schema, dict) else set())
        if key not in known and node_schema is not OPEN:
            raise _unknown(path[:depth], key, known)
        if last:
            node[key] = value
            break
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        elif not isinstance(child, dict):
            raise ConfigError(f"override {text!r}: {'.'.join(path[: depth + 1])!r} is a value, not a section")
        node = child
        node_schema = node_schema.get(key, OPEN) if isinstance(node_schema, dict) else OPEN
    validate(config, schema)


def load_config(
    path: str | os.PathLike, overrides: list[str] = (), schema: Mapping[str, Any] = SCHEMA
) -> dict[str, Any]:
    """Read a YAML experiment file, apply ``-o`` overrides and validate the result."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} not found; pass an existing YAML file with -c")
    try:
        config = _parse_yaml(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8"
        ) from None
    except RecursionError:
        raise ConfigError(f"config file {str(path)!r} nests too deeply for a YAML reader to follow") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(
            f"config file {str(path)!r} is not valid YAML{where}: {getattr(exc, 'problem', exc)}"
        ) from None
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping of sections, got {type(config).__name__}")
    validate(config, schema)
    for text in overrides:
        apply_override(config, text, schema)
    return config


def dump_config(config: Mapping[str, Any]) -> str:
    """The resolved config as YAML text that load_config reads back to an equal mapping."""
    return yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True)


def save_config(config: Mapping[str, Any], path: str | os.PathLike) -> Path:
    """Write the resolved config atomically, so a crash never leaves half a file."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(dump_config(config))
    return Path(path)
