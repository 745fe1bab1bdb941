"""The index a resuming job builds of its judgments file in one streamed pass
(`index_judgments`): the keys already judged, which records later ones replace, and the latest
records as a compact read-only mapping (`ExistingRecords`) that keeps the numerous label records
on disk and reads one back on lookup.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.io.judgments import read_judgment_at, scan_judgments
from reljudge.records import Judgment, Key


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
