"""Reading text input files line by line: the checks every reader of reljudge shares.

`read_lines` yields ``(line number, text)`` of a UTF-8 text file, gunzipped when its name ends
in ``.gz``, without the line end (``\\n`` or ``\\r\\n``) and without a UTF-8 byte order mark at
the start of the file (some editors write one; it is not part of the first line's text). A
missing file, a directory, a file that cannot be read or decompressed (including a corrupt or
truncated gzip body), bytes that are not UTF-8 and a file with nothing but whitespace raise
`InputError` (naming ``file:line`` where there is a line).

Two ways to read, the same lines and errors: the whole file at once (the default, fastest for
files that fit in memory, e.g. TREC runs and qrels), or ``stream=True``, one line at a time
(memory independent of the file, e.g. a large passage collection filtered to a few docids).
Streaming with ``max_line_bytes`` also bounds each line: a longer line raises `InputError` at its
number without being read whole (a hostile file of one endless line cannot bloat memory).

`JSONL_SUFFIXES` / `is_jsonl_name`: the file names read as JSON Lines (judgments, corpora).

Text that decodes is not yet valid Unicode: a JSON (or YAML) escape can name half a surrogate pair
(``"\\udc80"``), which `json.loads` accepts and every later encode (a write, a hash, a request)
refuses with a traceback. `loads_json` is the JSON reader of every text input (corpus lines,
answer files, judgment records, datasets' metadata...): bad JSON and lone surrogates are
`InputError` at ``file:line``. `check_unicode` makes the same check on any parsed value (YAML).
A provider's answer is not refused for it: `replace_surrogates` writes each lone surrogate as
U+FFFD, as a UTF-8 decoder writes a byte it cannot read.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from reljudge.errors import InputError, clip

#: suffixes of JSON Lines files (one JSON object per line), after an optional ``.gz``
JSONL_SUFFIXES: tuple[str, ...] = (".jsonl", ".json", ".ndjson")
#: the UTF-8 byte order mark, dropped from the start of a file
BOM = b"\xef\xbb\xbf"
#: what reading a file can raise besides `UnicodeDecodeError`: I/O errors (a bad gzip header or
#: CRC is an OSError), a truncated gzip stream (EOFError), a corrupt deflate body (zlib.error)
_READ_ERRORS = (OSError, EOFError, zlib.error)


def is_jsonl_name(path: str | Path) -> bool:
    """Whether the file name marks JSON Lines (``.jsonl``, ``.json``, ``.ndjson``, each
    optionally followed by ``.gz``)."""
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    return name.endswith(JSONL_SUFFIXES)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError("file not found", path)
    if path.is_dir():
        raise InputError("is a directory, expected a file", path)


def _not_utf8(raw: bytes, err: UnicodeDecodeError, path: Path, line: int) -> InputError:
    return InputError(f"not valid UTF-8 (byte {raw[err.start : err.start + 1]!r})", path, line)


def read_lines(
    path: str | Path, *, stream: bool = False, max_line_bytes: int | None = None
) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text without line end)`` of a text file (see the module docstring).
    ``max_line_bytes`` (which implies ``stream``) is the longest line accepted, line end included."""
    path = Path(path)
    _check_file(path)
    if max_line_bytes is not None:
        return _stream(path, max_line_bytes)
    return _stream(path) if stream else _whole(path)


def _whole(path: Path) -> Iterator[tuple[int, str]]:
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except _READ_ERRORS as err:
        raise InputError(f"cannot read: {_describe(err)}", path) from None
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.strip():
        raise InputError("file is empty", path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8(data, err, path, data.count(b"\n", 0, err.start) + 1) from None
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.rstrip("\r")


def _bounded(handle: IO[bytes] | gzip.GzipFile, limit: int, path: Path) -> Iterator[bytes]:
    """The lines of ``handle``, each read at most ``limit + 1`` bytes at a time."""
    number = 0
    while raw := handle.readline(limit + 1):
        number += 1
        if len(raw) > limit:
            raise InputError(f"line longer than {limit:,} bytes", path, number)
        yield raw


def _stream(path: Path, max_line_bytes: int | None = None) -> Iterator[tuple[int, str]]:
    number = 0
    content = False
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
            raws = handle if max_line_bytes is None else _bounded(handle, max_line_bytes, path)
            for number, raw in enumerate(raws, start=1):  # noqa: B007
                if number == 1 and raw.startswith(BOM):
                    raw = raw[len(BOM) :]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise _not_utf8(raw, err, path, number) from None
                content = content or bool(text.strip())
                yield number, text.rstrip("\r\n")
    except _READ_ERRORS as err:
        raise InputError(f"cannot read: {_describe(err)}", path, number or None) from None
    if not content:
        raise InputError("file is empty", path)


def _describe(err: BaseException) -> str:
    if isinstance(err, zlib.error):
        return f"corrupt gzip data ({err})"
    if isinstance(err, EOFError):
        return f"truncated gzip data ({err})"
    return str(err)


#: a JSON or YAML escape that may name a surrogate (``\\ud800``-``\\udfff``, ``\\U0000dc80``)
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")
#: a surrogate code point in a decoded string
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_in(value: Any, where: str = "") -> tuple[str, str] | None:
    """``(where, the surrogate)`` of the first string holding a lone surrogate in a parsed value."""
    if isinstance(value, str):
        found = None if value.isascii() else _SURROGATE.search(value)
        return (where, found.group()) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            hit = _surrogate_in(key, where) or _surrogate_in(item, f"{where}.{key}" if where else str(key))
            if hit:
                return hit
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            hit = _surrogate_in(item, f"{where}[{i}]")
            if hit:
                return hit
    return None


def check_unicode(
    value: Any, path: str | Path | None = None, line: int | None = None, text: str = ""
) -> None:
    """Raise `InputError` when a string of ``value`` (a parsed JSON or YAML value: keys, lists and
    nested objects included) holds a lone surrogate, which no file can be written with. ``text``
    (the source), when given without ``line``, locates the line of the first surrogate escape."""
    try:
        hit = _surrogate_in(value)
    except RecursionError:
        raise InputError("nested too deeply", path, line) from None
    if hit is None:
        return
    where, char = hit
    if line is None and text:
        escape = _SURROGATE_ESCAPE.search(text)
        line = text.count("\n", 0, escape.start()) + 1 if escape else None
    field = f" in {clip(where)}" if where else ""
    raise InputError(
        f"a lone surrogate \\u{ord(char):04x}{field} (half of a UTF-16 pair escaped on its own, "
        "not valid Unicode)",
        path,
        line,
    )


def loads_json(text: str | bytes, path: str | Path | None = None, line: int | None = None) -> Any:
    """``json.loads(text)``, the JSON reader of every text input: not JSON, nested too deeply or
    holding a lone surrogate (`check_unicode`) is an `InputError` naming ``path:line``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err.msg} at column {err.colno})", path, line) from None
    except UnicodeDecodeError as err:
        raw = text if isinstance(text, bytes) else b""
        raise InputError(f"not valid UTF-8 (byte {raw[err.start : err.start + 1]!r})", path, line) from None
    except RecursionError:
        raise InputError("not valid JSON (nested too deeply)", path, line) from None
    if _might_escape(text):
        check_unicode(value, path, line, text if isinstance(text, str) else "")
    return value


def _might_escape(text: str | bytes) -> bool:
    """Whether JSON text holds a ``\\u`` escape at all (the only way to a surrogate: UTF-8 bytes
    of one do not decode): the cheap test before walking the value."""
    return (b"\\u" in text) if isinstance(text, bytes) else ("\\u" in text)


def replace_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (parsed JSON) with each lone surrogate in its strings (keys included) replaced by
    U+FFFD, and how many were replaced; ``value`` itself when there were none."""
    if isinstance(value, str):
        if value.isascii():
            return value, 0
        return _SURROGATE.subn("\ufffd", value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            new_key, n_key = replace_surrogates(key)
            new_item, n_item = replace_surrogates(item)
            out[new_key] = new_item
            total += n_key + n_item
        return (out, total) if total else (value, 0)
    if isinstance(value, list):
        pairs = [replace_surrogates(item) for item in value]
        total = sum(n for _, n in pairs)
        return ([item for item, _ in pairs], total) if total else (value, 0)
    return value, 0
