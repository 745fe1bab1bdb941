"""Appending `Judgment` records to a judgments file, one flushed line per record
(`JudgmentWriter`), cutting a torn last line left by a crash (`repair_torn_tail`), and writing a
whole file atomically (`write_judgments`).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from reljudge.io.lines import BOM
from reljudge.io.redact import is_secret_name, scrub_secrets
from reljudge.records import Judgment

logger = logging.getLogger("reljudge.io.judgments")

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
