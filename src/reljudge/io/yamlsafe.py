"""The one way reljudge reads YAML that a user wrote: bounded, so that no file can bloat or crash a run.

PyYAML's safe loader still expands aliases: a few hundred bytes of ``&a [...]`` / ``*a`` ("billion
laughs") become billions of values as soon as anything walks, prints or validates them, and
``&a [*a]`` is a cycle that ends in a `RecursionError`. No file reljudge ships or documents uses
an alias, so `BoundedLoader` refuses anchors and aliases altogether, and it bounds what is left:
the size of the text (`MAX_BYTES`), the nodes of a document (`MAX_NODES`) and their nesting
(`MAX_DEPTH`). Every problem, including a value PyYAML cannot build (an integer of 5000 digits,
a 30th of February), is an `InputError` naming ``file:line``.

`load_yaml` parses a text to plain Python values and `read_yaml_text` reads a file with the size
bound. Callers that walk the nodes themselves (`reljudge.sweep.yamlines`) take their loader from
`bounded_loader` and wrap their work in `yaml_input_errors`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from reljudge.errors import InputError, clip
from reljudge.io.lines import check_unicode

#: largest YAML text read (prompt files with long few-shot examples are far below it)
MAX_BYTES = 4 * 1024 * 1024
#: most nodes (scalars, lists, mappings) in one document; each costs PyYAML about 1 KB while loading
MAX_NODES = 50_000
#: deepest nesting of lists and mappings (reljudge's files need fewer than 10)
MAX_DEPTH = 50

ALIAS_MESSAGE = "YAML aliases (&anchor / *alias) are not supported"


class BoundedLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses anchors and aliases and bounds nodes and nesting.

    ``source`` names the file in errors. The checks run while the document is composed, before
    any value is built, so a refused document costs only the text read so far."""

    def __init__(self, text: str, source: str | Path):
        super().__init__(text)
        self.source = str(source)
        self._depth = 0
        self._nodes = 0

    def _fail(self, message: str, mark: yaml.Mark | None) -> InputError:
        return InputError(message, self.source, None if mark is None else mark.line + 1)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise self._fail(ALIAS_MESSAGE, event.start_mark)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise self._fail(f"more than {MAX_NODES} YAML values in one file", event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise self._fail(f"YAML nested deeper than {MAX_DEPTH} levels", event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


@contextmanager
def yaml_input_errors(source: str | Path) -> Iterator[None]:
    """Turn what PyYAML raises while parsing or building values into `InputError` (``source:line``)."""
    try:
        yield
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        raise InputError(
            f"invalid YAML: {err.problem or err.context or 'cannot parse'}", source, line
        ) from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {clip(str(err), 200)}", source) from None
    except (ValueError, OverflowError) as err:
        # raised while building a value, e.g. int() of more than 4300 digits, date(2001, 2, 30)
        raise InputError(f"invalid YAML value: {clip(str(err), 200)}", source) from None


def bounded_loader(text: str, source: str | Path) -> BoundedLoader:
    """A `BoundedLoader` for ``text`` (an `InputError` when the text is over `MAX_BYTES`); call
    its ``dispose()`` when done."""
    if len(text) > MAX_BYTES:
        raise _too_large(source)
    return BoundedLoader(text, source)


def load_yaml(text: str, source: str | Path) -> Any:
    """The plain Python value of one YAML (or JSON) document, read with `BoundedLoader`."""
    loader = bounded_loader(text, source)
    try:
        with yaml_input_errors(source):
            value = loader.get_single_data()
    finally:
        loader.dispose()
    check_unicode(value, source, text=text)
    return value


def read_yaml_text(path: str | Path, what: str = "file") -> str:
    """The text of a YAML file, at most `MAX_BYTES` (read no further than that).

    ``what`` names the file in errors (``cannot read prompt file: ...``)."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path) from None
    except OSError as err:
        raise InputError(f"cannot read {what}: {err.strerror or err}", path) from None
    if len(data) > MAX_BYTES:
        raise _too_large(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError("not valid UTF-8", path, line) from None


def _too_large(source: str | Path) -> InputError:
    return InputError(f"larger than {MAX_BYTES:,} bytes, too large for a YAML file", source)
