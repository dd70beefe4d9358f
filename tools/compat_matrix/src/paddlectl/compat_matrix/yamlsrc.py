"""YAML that remembers line numbers, so every data error can name its file and line."""

from __future__ import annotations

from pathlib import Path

import yaml

from .errors import MatrixError


class LDict(dict):
    """A mapping read from YAML; ``line`` is where it starts, ``key_lines[key]`` where each key is."""

    line: int = 0
    key_lines: dict


class LList(list):
    """A sequence read from YAML; ``item_lines[i]`` is the line of item ``i``."""

    line: int = 0
    item_lines: list


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> LDict:
    loader.flatten_mapping(node)
    result = LDict()
    result.line, result.key_lines = node.start_mark.line + 1, {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise yaml.MarkedYAMLError(problem=f"key {key!r} is not a string", problem_mark=key_node.start_mark)
        if key in result:
            raise yaml.MarkedYAMLError(problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = line
    return result


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> LList:
    result = LList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load_yaml(path: str | Path, text: str | None = None) -> LDict:
    """Parse a YAML file whose top level must be a mapping; errors carry the file and line."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise MatrixError(path, None, "file not found", "check the path") from None
        except OSError as exc:
            raise MatrixError(path, None, f"cannot read the file: {exc.strerror}") from None
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise MatrixError(path, line, f"invalid YAML: {exc.problem or exc.context}", "fix the syntax") from None
    except yaml.YAMLError as exc:
        raise MatrixError(path, None, f"invalid YAML: {exc}", "fix the syntax") from None
    except RecursionError:
        raise MatrixError(path, None, "the YAML nests too deeply to read", "flatten the document") from None
    if not isinstance(data, LDict):
        raise MatrixError(path, 1, "the top level must be a mapping", "start the file with `key: value` lines")
    return data
