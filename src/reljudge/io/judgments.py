"""Judgment files: JSON Lines, one `Judgment` record per line, appended as they are produced.

Crash safety: `JudgmentWriter` writes each record as one complete line and flushes it before
returning (``fsync=True`` also forces it to disk), so a crash loses at most the record being
written. Such a crash can leave a *torn* last line (a partial line without its newline). The
writer cuts it off when it reopens the file, with a warning; readers skip a torn last line
with a warning too. Any other malformed line is an `InputError` naming ``file:line``.

Re-runs append: when a key (`Judgment.key`) appears several times, e.g. after
``--retry-failed``, `load_judgments(..., latest=True)` keeps the last record of each key.

This module reads and indexes judgment files; beside it, `reljudge.io.judgment_lines` reads one
line, `reljudge.io.judgment_writer` appends and repairs, and `reljudge.io.label_views` reads the
label fields alone. Every name is importable from here.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.io.judgment_lines import JUDGMENTS_FILE, is_judgments_path, parse_line, resolve_judgments_path
from reljudge.io.judgment_writer import JudgmentWriter, repair_torn_tail, write_judgments
from reljudge.io.label_views import LabelView, iter_label_views
from reljudge.records import Judgment, Key

__all__ = [
    "JUDGMENTS_FILE",
    "ExistingRecords",
    "JudgmentWriter",
    "JudgmentsIndex",
    "LabelView",
    "index_judgments",
    "is_judgments_path",
    "iter_judgments",
    "iter_label_views",
    "latest_by_key",
    "load_judgments",
    "read_judgment_at",
    "read_judgments",
    "read_judgments_at",
    "repair_torn_tail",
    "resolve_judgments_path",
    "scan_judgments",
    "write_judgments",
]


def scan_judgments(path: str | Path) -> Iterator[tuple[int, Judgment]]:
    """Like `iter_judgments`, streaming the file, with each record's byte offset in the file
    (for `read_judgment_at`). Memory does not grow with the file."""
    path = resolve_judgments_path(path)
    with path.open("rb") as handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            here = offset
            offset += len(raw)
            if not raw.strip():
                continue
            torn = not raw.endswith(b"\n")  # only the last line can lack its newline
            record = parse_line(raw, path, number, last=torn)
            if record is None:
                return
            yield here, record


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


class ExistingRecords(Mapping[Key, Judgment]):
    """The latest record of each key of a judgments file, as a compact read-only `Mapping`.

    Records whose method is in ``lazy_methods`` (typically the final label records, by far the
    most numerous) are not held in memory: only their key and byte offset are, and a lookup reads
    that one line again. All other records (stage records such as EXAM questions or nuggets,
    which later stages read) are kept as they are. Built by `index_judgments`.
    """

    def __init__(self, path: Path | None, offsets: dict[Key, int], kept: dict[Key, Judgment]):
        self._path = path
        self._offsets = offsets  # lazy records: key -> byte offset of its latest line
        self._kept = kept

    def __getitem__(self, key: Key) -> Judgment:
        record = self._kept.get(key)
        if record is not None:
            return record
        offset = self._offsets[key]  # KeyError when absent, as a Mapping should
        assert self._path is not None
        return read_judgment_at(self._path, offset)

    def __contains__(self, key: object) -> bool:
        return key in self._kept or key in self._offsets

    def get(self, key: Key, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __iter__(self) -> Iterator[Key]:
        yield from self._kept
        yield from self._offsets

    def __len__(self) -> int:
        return len(self._kept) + len(self._offsets)

    def __repr__(self) -> str:
        return f"ExistingRecords({len(self)} keys, {len(self._kept)} in memory)"


@dataclass
class JudgmentsIndex:
    """What one streamed pass over a judgments file tells a resuming job (see `index_judgments`).

    ``records``: records in the file (every line); ``latest``: key -> ordinal (0-based position
    among the records) of the key's latest record; ``superseded``: ordinals of the records that
    a later record of the same key replaces; ``existing``: the latest records, minus those with
    an excluded status, as an `ExistingRecords`; ``offsets``: byte offset of each record, by
    ordinal (8 bytes a record; see `superseded_offsets`); ``stats``: (latest, every)
    `reljudge.io.rundir.RecordStats` when the index was built by ``RunDir.index(stats=True)``.
    """

    records: int
    latest: dict[Key, int]
    superseded: set[int]
    existing: ExistingRecords
    offsets: array[int] = field(default_factory=lambda: array("q"))
    stats: Any = None

    def superseded_offsets(self) -> list[int]:
        """Byte offsets of the superseded records (for `read_judgments_at`)."""
        return [self.offsets[ordinal] for ordinal in sorted(self.superseded)]


def index_judgments(
    path: Path,
    *,
    lazy_methods: Collection[str] = (),
    exclude_statuses: Collection[str] = (),
    on_record: Callable[[Judgment], Any] | None = None,
) -> JudgmentsIndex:
    """One streamed pass over a judgments file (missing or empty: an empty index).
    ``on_record`` is called with every record read (e.g. to count it), in file order."""
    latest: dict[Key, int] = {}
    superseded: set[int] = set()
    offsets: dict[Key, int] = {}
    kept: dict[Key, Judgment] = {}
    lazy = frozenset(lazy_methods)
    excluded = frozenset(exclude_statuses)
    strings: dict[str, str] = {}  # one copy of each repeated key part (method, qid)
    offsets_by_ordinal: array[int] = array("q")
    ordinal = -1
    if path.exists() and path.stat().st_size > 0:
        for ordinal, (offset, record) in enumerate(scan_judgments(path)):  # noqa: B007
            offsets_by_ordinal.append(offset)
            if on_record is not None:
                on_record(record)
            method, qid, docid, docid_b, item_id = record.key
            key = (
                strings.setdefault(method, method),
                strings.setdefault(qid, qid),
                docid,
                docid_b,
                item_id,
            )
            earlier = latest.get(key)
            if earlier is not None:
                superseded.add(earlier)
            latest[key] = ordinal
            offsets.pop(key, None)
            kept.pop(key, None)
            if record.status in excluded:
                continue
            if record.method in lazy:
                offsets[key] = offset
            else:
                kept[key] = record
    return JudgmentsIndex(
        ordinal + 1, latest, superseded, ExistingRecords(path, offsets, kept), offsets_by_ordinal
    )
