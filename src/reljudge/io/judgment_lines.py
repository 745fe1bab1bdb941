"""One line of a judgments file (JSON Lines, one `Judgment` record per line): where the file is
(a file, or the ``judgments.jsonl`` of a run directory) and how a line reads as a record.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pydantic import ValidationError

from reljudge.errors import InputError, input_error_from_validation
from reljudge.io.lines import BOM, JSONL_SUFFIXES
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
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object (one judgment record per line)", path, number)
    try:
        return Judgment.model_validate(obj)
    except ValidationError as err:
        raise input_error_from_validation(
            err, path=path, line=number, what="invalid judgment record"
        ) from None
