"""Judgment files: JSON Lines, one `Judgment` record per line, appended as they are produced.

Crash safety: `JudgmentWriter` writes each record as one complete line and flushes it before
returning (``fsync=True`` also forces it to disk), so a crash loses at most the record being
written. Such a crash can leave a *torn* last line (a partial line without its newline). The
writer cuts it off when it reopens the file, with a warning; readers skip a torn last line
with a warning too. Any other malformed line is an `InputError` naming ``file:line``.

Re-runs append: when a key (`Judgment.key`) appears several times, e.g. after
``--retry-failed``, `load_judgments(..., latest=True)` keeps the last record of each key.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

from pydantic import ValidationError

from reljudge.errors import InputError
from reljudge.io.redact import is_secret_name, scrub_secrets
from reljudge.records import Judgment

logger = logging.getLogger(__name__)

JUDGMENTS_FILE = "judgments.jsonl"


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


def repair_torn_tail(path: str | Path) -> int:
    """Cut off a trailing partial line (no final newline) left by a crash; return bytes cut."""
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
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    cut = size - keep
    logger.warning("%s: cut off a torn last line (%d bytes, left by an interrupted write)", path, cut)
    return cut


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
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(self.path)
        self._handle = self.path.open("a", encoding="utf-8", newline="\n")

    def write(self, judgment: Judgment) -> None:
        if not isinstance(judgment, Judgment):
            raise TypeError(f"expected a Judgment, got {type(judgment).__name__}")
        params = judgment.provenance.params
        if params and any(is_secret_name(str(name)) for name in params):
            clean = judgment.provenance.model_copy(update={"params": scrub_secrets(params)})
            judgment = judgment.model_copy(update={"provenance": clean})
        line = judgment.to_json() + "\n"
        with self._lock:
            if self._handle.closed:
                raise ValueError(f"JudgmentWriter for {self.path} is closed")
            self._handle.write(line)
            self._handle.flush()
            if self.fsync:
                os.fsync(self._handle.fileno())
            self.count += 1

    def write_many(self, judgments: Iterable[Judgment]) -> None:
        for judgment in judgments:
            self.write(judgment)

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.flush()
                os.fsync(self._handle.fileno())
                self._handle.close()

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def __enter__(self) -> JudgmentWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _describe(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "record"
    more = f" (and {err.error_count() - 1} more problem(s))" if err.error_count() > 1 else ""
    return f"invalid judgment record: {where}: {first.get('msg', 'invalid')}{more}"


def iter_judgments(path: str | Path) -> Iterator[Judgment]:
    """Yield the records of a judgments file (or a run directory's ``judgments.jsonl``) in order.

    Blank lines are skipped; a torn last line (no newline, not valid JSON) is skipped with a
    warning; any other bad line raises `InputError` with ``file:line``.
    """
    path = resolve_judgments_path(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn_tail = not data.endswith(b"\n")
    last_index = len(lines) - 1
    for index, raw in enumerate(lines):
        number = index + 1
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(
                f"not valid UTF-8 (byte {raw[err.start : err.start + 1]!r})", path, number
            ) from None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            if torn_tail and index == last_index:
                logger.warning("%s:%d: skipped a torn last line (an interrupted write)", path, number)
                return
            raise InputError(f"not valid JSON ({err.msg} at column {err.colno})", path, number) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object (one judgment record per line)", path, number)
        try:
            yield Judgment.model_validate(obj)
        except ValidationError as err:
            raise InputError(_describe(err), path, number) from None


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


def write_judgments(judgments: Iterable[Judgment], path: str | Path) -> int:
    """Write records to a new JSONL file atomically (replacing it); return the count."""
    from reljudge.io.atomic import atomic_write

    count = 0
    with atomic_write(path) as handle:
        for judgment in judgments:
            handle.write(judgment.to_json() + "\n")
            count += 1
    return count
