"""Judgment files: JSON Lines, one `Judgment` record per line, appended as they are produced.

Where the file is (a file, or the ``judgments.jsonl`` of a run directory), how a line reads as a
record (`parse_line`), appending (`JudgmentWriter`), and reading back (`iter_judgments`,
`scan_judgments`, `load_judgments`; `scan_bare_records` for the end of a run). The index a
resuming job builds of a file is `reljudge.io.judgment_index`.

Crash safety: `JudgmentWriter` writes each record as one complete line and flushes it before
returning (``fsync=True`` also forces it to disk), so a crash loses at most the record being
written. Such a crash can leave a *torn* last line (a partial line without its newline). The
writer cuts it off when it reopens the file, with a warning; readers skip a torn last line
with a warning too. Any other malformed line is an `InputError` naming ``file:line``.

Re-runs append: when a key (`Judgment.key`) appears several times, e.g. after
``--retry-failed``, `load_judgments(..., latest=True)` keeps the last record of each key.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from collections import namedtuple
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from reljudge.errors import InputError, input_error_from_validation
from reljudge.io.lines import BOM, JSONL_SUFFIXES, check_unicode
from reljudge.io.redact import is_secret_name, scrub_secrets
from reljudge.records import Judgment

logger = logging.getLogger("reljudge.io.judgments")

JUDGMENTS_FILE = "judgments.jsonl"


def is_judgments_path(path: str | Path) -> bool:
    """Whether ``path`` is read as reljudge judgment records rather than as a qrels-like file:
    a directory (a run directory holding ``judgments.jsonl``) or a JSON Lines file name
    (`reljudge.io.lines.JSONL_SUFFIXES`: ``.jsonl``, ``.json``, ``.ndjson``)."""
    path = Path(path)
    return path.is_dir() or path.name.endswith(JSONL_SUFFIXES)


def resolve_judgments_path(path: str | Path) -> Path:
    """A judgments file, or the ``judgments.jsonl`` inside a run directory."""
    path = Path(path)
    if path.is_dir():
        inner = path / JUDGMENTS_FILE
        if not inner.exists():
            raise InputError(f"directory has no {JUDGMENTS_FILE}", path)
        return inner
    if not path.exists():
        raise InputError("file not found", path)
    return path


def parse_line(raw: bytes, path: Path, number: int, *, last: bool) -> Judgment | None:
    """One line as a record; None for a torn last line (skipped with a warning). A UTF-8 byte
    order mark (at the start of the file) is ignored."""
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        # fast path: pydantic's own JSON parser validates straight from the bytes
        return Judgment.model_validate_json(raw)
    except ValidationError:
        pass  # the slow path below gives the precise error (or accepts what JSON mode did not)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not valid UTF-8 (byte {raw[err.start : err.start + 1]!r})", path, number) from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        if last:
            logger.warning("%s:%d: skipped a torn last line (an interrupted write)", path, number)
            return None
        raise InputError(f"not valid JSON ({err.msg} at column {err.colno})", path, number) from None
    except RecursionError:
        raise InputError("not valid JSON (nested too deeply)", path, number) from None
    check_unicode(obj, path, number)
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object (one judgment record per line)", path, number)
    try:
        return Judgment.model_validate(obj)
    except ValidationError as err:
        raise input_error_from_validation(
            err, path=path, line=number, what="invalid judgment record"
        ) from None


# -- appending --------------------------------------------------------------------------------

# The same few param names (temperature, seed, ...) come with every record: check each once.
_secret_name = functools.lru_cache(maxsize=1024)(is_secret_name)


def repair_torn_tail(path: str | Path) -> int:
    """Make the last line of a judgments file whole; return the bytes cut off.

    A last line without its newline is either a complete record that lost only its newline (a
    crash between the two, or a file edited by hand): it gets the newline and is kept (0 bytes
    cut); or a partial line left by a crash in the middle of a write: it is cut off, with a
    warning. Call this before indexing a file that will be appended to, so that the index and
    the file agree (`RunDir.repair_tail`)."""
    path = Path(path)
    if not path.exists():
        return 0
    with path.open("r+b") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        # find the last newline, reading backwards in blocks
        end = size
        keep = 0
        while end > 0:
            start = max(0, end - 65536)
            handle.seek(start)
            block = handle.read(end - start)
            index = block.rfind(b"\n")
            if index >= 0:
                keep = start + index + 1
                break
            end = start
        handle.seek(keep)
        if _is_complete_line(handle.read(size - keep)):
            handle.seek(size)
            handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
            logger.warning("%s: the last record had no final newline; added it (the record is kept)", path)
            return 0
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    cut = size - keep
    logger.warning("%s: cut off a torn last line (%d bytes, left by an interrupted write)", path, cut)
    return cut


def _is_complete_line(raw: bytes) -> bool:
    """Whether a line (without its newline) is a whole JSON object, i.e. not cut by a crash."""
    try:
        return isinstance(json.loads(raw.removeprefix(BOM)), dict)
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        return False


class JudgmentWriter:
    """Append `Judgment` records to a JSONL file, one flushed line per record.

    Use as a context manager or call `close()`. Safe to call from several threads. On open,
    a torn last line from an earlier crash is removed (see `repair_torn_tail`). As a last line
    of defence, secret-named entries of ``provenance.params`` (``api_key``, ...) are masked.
    """

    def __init__(self, path: str | Path, *, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync
        self.count = 0
        self._failed: OSError | None = None  # the error of a write that failed
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(self.path)
        self._handle = self.path.open("a", encoding="utf-8", newline="\n")

    def write(self, judgment: Judgment) -> None:
        if not isinstance(judgment, Judgment):
            raise TypeError(f"expected a Judgment, got {type(judgment).__name__}")
        params = judgment.provenance.params
        if params and any(_secret_name(str(name)) for name in params):
            clean = judgment.provenance.model_copy(update={"params": scrub_secrets(params)})
            judgment = judgment.model_copy(update={"provenance": clean})
        line = judgment.to_json() + "\n"
        with self._lock:
            if self._handle.closed:
                raise ValueError(f"JudgmentWriter for {self.path} is closed")
            try:
                self._handle.write(line)
                self._handle.flush()
                if self.fsync:
                    os.fsync(self._handle.fileno())
            except OSError as err:  # a full disk: the caller decides; `close` will not raise again
                self._failed = err
                raise
            self.count += 1

    def write_many(self, judgments: Iterable[Judgment]) -> None:
        for judgment in judgments:
            self.write(judgment)

    def close(self) -> None:
        """Flush, sync and close. After a write failed (`OSError`, e.g. a full disk) the file is
        closed without raising the same error again; a partial last line it may have left is
        cut when the file is next opened for appending (`repair_torn_tail`)."""
        with self._lock:
            if self._handle.closed:
                return
            error: OSError | None = None
            try:
                self._handle.flush()
                os.fsync(self._handle.fileno())
            except OSError as err:
                error = err
            try:
                self._handle.close()  # closes the file even when its last flush fails
            except OSError as err:
                error = error or err
            if error is not None and self._failed is None:
                raise error

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def __enter__(self) -> JudgmentWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def write_judgments(judgments: Iterable[Judgment], path: str | Path) -> int:
    """Write records to a new JSONL file atomically (replacing it); return the count."""
    from reljudge.io.atomic import atomic_write

    count = 0
    with atomic_write(path) as handle:
        for judgment in judgments:
            handle.write(judgment.to_json() + "\n")
            count += 1
    return count


# -- reading --------------------------------------------------------------------------------


def scan_judgments(path: str | Path) -> Iterator[tuple[int, Judgment]]:
    """Like `iter_judgments`, streaming the file, with each record's byte offset in the file
    (for `read_judgment_at`). Memory does not grow with the file."""
    path = resolve_judgments_path(path)
    for number, here, raw in _lines(path):
        torn = not raw.endswith(b"\n")  # only the last line can lack its newline
        record = parse_line(raw, path, number, last=torn)
        if record is None:
            return
        yield here, record


def _lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, the line) of each line of a file that is not blank, streamed."""
    with path.open("rb") as handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            here = offset
            offset += len(raw)
            if raw.strip():
                yield number, here, raw


def read_judgment_at(path: str | Path, offset: int) -> Judgment:
    """The record on the line that starts at byte ``offset`` of a judgments file."""
    path = Path(path)
    with path.open("rb") as handle:
        handle.seek(offset)
        raw = handle.readline()
    record = parse_line(raw, path, 0, last=False)
    assert record is not None
    return record


def read_judgments_at(path: str | Path, offsets: Iterable[int]) -> Iterator[Judgment]:
    """The records on the lines that start at these byte offsets, in file order, read through
    one handle (for a few records out of a large file)."""
    path = Path(path)
    with path.open("rb") as handle:
        for offset in sorted(offsets):
            handle.seek(offset)
            record = parse_line(handle.readline(), path, 0, last=False)
            assert record is not None
            yield record


def iter_judgments(path: str | Path) -> Iterator[Judgment]:
    """Yield the records of a judgments file (or a run directory's ``judgments.jsonl``) in order.

    Blank lines are skipped; a torn last line (no newline, not valid JSON) is skipped with a
    warning; any other bad line raises `InputError` with ``file:line``. The file is streamed.
    """
    for _, record in scan_judgments(path):
        yield record


def read_judgments(path: str | Path) -> list[Judgment]:
    """All records of a judgments file or run directory, in file order (duplicates kept)."""
    return list(iter_judgments(path))


def latest_by_key(judgments: Iterable[Judgment]) -> list[Judgment]:
    """One record per `Judgment.key`: the last one, placed where its key first appeared."""
    latest: dict[tuple[str, ...], Judgment] = {}
    for judgment in judgments:
        latest[judgment.key] = judgment  # dict keeps first-insertion order, value replaced
    return list(latest.values())


def load_judgments(path: str | Path, *, latest: bool = True) -> list[Judgment]:
    """Read judgments; with ``latest=True`` (default) the last record of each key wins."""
    judgments = iter_judgments(path)
    return latest_by_key(judgments) if latest else list(judgments)


# -- records without their payload, for scoring ------------------------------------------------

#: what a record carries besides its identity, label and status: the model's answer (``raw``),
#: why it failed, how its label was read, the judge's notes (``extra``) and the provenance.
#: Scoring a run's label records never reads them (`BareRecord`).
PAYLOAD_FIELDS: tuple[str, ...] = ("raw", "error", "parse", "extra", "provenance")
#: every other field of `Judgment`, in the model's order: the fields of a `BareRecord`
BARE_FIELDS: tuple[str, ...] = tuple(name for name in Judgment.model_fields if name not in PAYLOAD_FIELDS)


class BareRecord(namedtuple("BareRecord", BARE_FIELDS)):  # type: ignore[misc]  # fields generated from the model
    """A `Judgment` without its payload (`PAYLOAD_FIELDS`): the record's other fields (generated
    from the model, so a field added to `Judgment` is here too), with its ``ok`` and ``key``.
    A few dozen bytes instead of a few kilobytes: how the end of a run reads its label records
    back (`scan_bare_records`), for any judge, also one that holds them to score them."""

    __slots__ = ()
    ok = vars(Judgment)["ok"]  # the record's own properties
    key = vars(Judgment)["key"]

    @classmethod
    def of(cls, record: Judgment, strings: dict[str, str] | None = None) -> BareRecord:
        """The bare record of a full one; ``strings``: one copy of each repeated topic id and
        method name (shared by the records of a large file)."""
        return cls._bare({name: getattr(record, name) for name in BARE_FIELDS}, strings)

    @classmethod
    def _bare(cls, values: dict[str, Any], strings: dict[str, str] | None) -> BareRecord:
        """From the values of `BARE_FIELDS`, in that order (changed in place: ``strings``)."""
        if strings is not None:
            values["qid"] = strings.setdefault(values["qid"], values["qid"])
            values["method"] = strings.setdefault(values["method"], values["method"])
        return cls._make(values.values())


#: a judgment line read for its bare fields only (the payload is skipped, not built)
_BARE_DEFINITIONS: dict[str, Any] = {
    name: (field.annotation, field) for name, field in Judgment.model_fields.items() if name in BARE_FIELDS
}
_BareLine = create_model("_BareLine", __config__=ConfigDict(extra="ignore"), **_BARE_DEFINITIONS)


def scan_bare_records(
    path: str | Path, methods: Collection[str], strings: dict[str, str] | None = None
) -> Iterator[tuple[int, BareRecord | Judgment]]:
    """Like `scan_judgments` (each record with the byte offset of its line), the records of
    ``methods`` as `BareRecord`s: read without building (or checking) their payload, at about half
    the cost; the others in full. Meant for a file whose records were checked when they were
    written (a run's own file at the end of the run): a line of ``methods`` is checked for its
    bare fields only; any other line that does not read as a record is an `InputError`."""
    path = resolve_judgments_path(path)
    bare = frozenset(methods)
    strings = {} if strings is None else strings
    for number, here, raw in _lines(path):
        record = _read_bare(raw, path, number, bare, strings, last=not raw.endswith(b"\n"))
        if record is None:  # a torn last line, skipped with a warning
            return
        yield here, record


def read_bare_record_at(
    path: str | Path, offset: int, methods: Collection[str], strings: dict[str, str] | None = None
) -> BareRecord | Judgment:
    """The record on the line that starts at byte ``offset``, read as `scan_bare_records` reads it."""
    path = Path(path)
    with path.open("rb") as handle:
        handle.seek(offset)
        raw = handle.readline()
    record = _read_bare(raw, path, 0, frozenset(methods), strings, last=False)
    assert record is not None
    return record


def _read_bare(
    raw: bytes, path: Path, number: int, bare: frozenset[str], strings: dict[str, str] | None, *, last: bool
) -> BareRecord | Judgment | None:
    try:
        # the parsed line's own fields, in `BARE_FIELDS` order (the line object is not kept)
        values: dict[str, Any] | None = vars(_BareLine.model_validate_json(raw))
    except ValidationError:
        values = None
    if values is not None and values["method"] in bare:
        return BareRecord._bare(values, strings)
    record = parse_line(raw, path, number, last=last)
    if record is None or record.method not in bare:
        return record
    return BareRecord.of(record, strings)
