"""The batch lines that brought no answer to cache, kept in the run directory
(``batch/failures.jsonl``): a failed request (its error) or an answer that is not a whole, good
one (truncated, refused: its completion). The collect mode of the client answers such a request
from here, so that it becomes a record like its synchronous twin; ``--retry-failed`` starts a new
file, so that those requests are sent again.

Only the offset of each entry is held in memory; an entry is read back when asked for. Entries
are appended one line at a time. A torn last line (a kill, a full disk mid-write) is skipped when
read, and the next entry starts on a line of its own (`FailureLog.add` ends the torn tail first),
so that it is never glued to the torn bytes and lost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reljudge.llm.batch.lines import is_custom_id

#: the most characters of a failed answer's text kept (a truncated answer's beginning)
MAX_FAILURE_TEXT = 16 * 1024
#: the longest entry line read back
MAX_ENTRY_BYTES = 4 * MAX_FAILURE_TEXT + 16 * 1024


class FailureLog:
    """``custom_id -> entry`` over an append-only JSONL file (the last entry of an id wins)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._offsets: dict[str, int] = {}
        if self.path.exists():
            with self.path.open("rb") as handle:
                offset = 0
                for line in handle:
                    custom_id = _entry_id(line)
                    if custom_id is not None and line.endswith(b"\n"):
                        self._offsets[custom_id] = offset
                    offset += len(line)

    def __len__(self) -> int:
        return len(self._offsets)

    def __contains__(self, custom_id: object) -> bool:
        return custom_id in self._offsets

    def get(self, custom_id: str) -> dict[str, Any] | None:
        offset = self._offsets.get(custom_id)
        if offset is None:
            return None
        with self.path.open("rb") as handle:
            handle.seek(offset)
            line = handle.readline(MAX_ENTRY_BYTES)
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            return None
        return entry if isinstance(entry, dict) else None

    def add(self, custom_id: str, entry: dict[str, Any]) -> None:
        """Append the entry of ``custom_id`` (written to the file before returning: a kill
        after it keeps it)."""
        limit = MAX_FAILURE_TEXT
        while True:  # every text clipped, until the line is one `get` and the index read back
            clipped = _clipped(entry, limit)
            data = json.dumps({**clipped, "custom_id": custom_id}, ensure_ascii=False).encode("utf-8") + b"\n"
            if len(data) <= MAX_ENTRY_BYTES or limit == 0:
                break
            limit //= 2
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as handle:
            end = handle.seek(0, 2)
            if end:  # after a torn last line the entry starts on a line of its own
                handle.seek(end - 1)
                if handle.read(1) != b"\n":
                    data = b"\n" + data
                    end += 1
            handle.write(data)
            handle.flush()
        self._offsets[custom_id] = end

    def ids(self) -> list[str]:
        return list(self._offsets)


def _clipped(value: Any, limit: int, depth: int = 0) -> Any:
    """``value`` with every string cut to ``limit`` characters (an entry is ours: two levels of
    objects at most; anything deeper is dropped)."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, dict):
        if depth >= 2:
            return None
        return {str(k)[:100]: _clipped(v, limit, depth + 1) for k, v in value.items()}
    return value


def _entry_id(line: bytes) -> str | None:
    if len(line) > MAX_ENTRY_BYTES:
        return None
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
    return custom_id if is_custom_id(custom_id) else None
