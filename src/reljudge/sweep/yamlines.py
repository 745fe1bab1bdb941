"""YAML (and JSON) loading that remembers the line of every key, for errors that name ``file:line``.

`load_with_lines` returns the plain Python value (as `yaml.safe_load` would) and a `LineMap`
from paths such as ``("models", 0, "params")`` to 1-based line numbers. JSON is read by the same
parser (JSON is YAML), so prompt collections in JSON get line numbers too. A duplicate key in one
mapping is an error here (PyYAML would keep the last one silently). The text is read and parsed
with `reljudge.io.yamlsafe` (no aliases; bounded size, values and nesting).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from reljudge.errors import InputError, shown
from reljudge.io.lines import check_unicode
from reljudge.io.yamlsafe import BoundedLoader, bounded_loader, read_yaml_text, yaml_input_errors

PathKey = tuple[Any, ...]


class LineMap:
    """1-based line numbers of the keys and items of a loaded document."""

    def __init__(self, lines: dict[PathKey, int] | None = None):
        self._lines: dict[PathKey, int] = lines or {}

    def __setitem__(self, key: PathKey, line: int) -> None:
        self._lines[key] = line

    def get(self, path: Sequence[Any]) -> int | None:
        """The line of ``path`` or of its longest prefix that has one (None for an empty map)."""
        path = tuple(path)
        while True:
            if path in self._lines:
                return self._lines[path]
            if not path:
                return None
            path = path[:-1]

    def sub(self, prefix: Sequence[Any]) -> LineMap:
        """The lines under ``prefix``, with the prefix removed from their paths."""
        prefix = tuple(prefix)
        n = len(prefix)
        return LineMap({k[n:]: v for k, v in self._lines.items() if k[:n] == prefix})


def _walk(loader: BoundedLoader, node: yaml.Node, path: PathKey, lines: LineMap, source: str) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise InputError("a mapping key must be a plain value", source, key_node.start_mark.line + 1)
            if key in out:
                raise InputError(f"duplicate key {shown(key)}", source, key_node.start_mark.line + 1)
            out[key] = _walk(loader, value_node, (*path, key), lines, source)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(loader, item, (*path, i), lines, source) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def load_with_lines(text: str, source: str | Path) -> tuple[Any, LineMap]:
    """Parse YAML/JSON ``text``; syntax errors become `InputError` with ``source:line``."""
    source = str(source)
    loader = bounded_loader(text, source)
    try:
        with yaml_input_errors(source):
            node = loader.get_single_node()
            lines = LineMap()
            value = None if node is None else _walk(loader, node, (), lines, source)
    finally:
        loader.dispose()
    check_unicode(value, source, text=text)
    return value, lines


def load_file_with_lines(path: str | Path) -> tuple[Any, LineMap]:
    return load_with_lines(read_yaml_text(path), path)
