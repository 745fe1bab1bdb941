"""One invocation of a job: what it wrote, and reading the run directory back at its end.

`Session` keeps running counters over the records an invocation writes (its `Ledger`, and the
key hashes that tell which records replace earlier ones) -- never the records themselves, so
memory does not grow with the run. `read_back` gathers in one streamed pass over
``judgments.jsonl`` what the end of a job needs: the counts of the latest and of all records,
the usage of every record, and the records `reljudge.run.derive.derive_qrels` scores.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reljudge.aggregation.streamed import NotPointwise
from reljudge.run.ledger import Ledger, UsageSum
from reljudge.run.prepare import PreparedJob, label_methods

if TYPE_CHECKING:
    from reljudge.aggregation.streamed import StreamedLabels
    from reljudge.io.rundir import RecordStats
    from reljudge.records import Judgment


@dataclass
class Session:
    """State of one invocation: what it spent, and which records it wrote (by key hash)."""

    started: float
    started_at: str
    new_records: int = 0
    ledger: Ledger = field(default_factory=Ledger)
    #: hash of each new record's key, to notice a key written twice in this session
    key_hashes: array[int] = field(default_factory=lambda: array("q"))
    #: ordinals of records in judgments.jsonl that a later record of the same key replaces
    superseded: set[int] = field(default_factory=set)
    #: when the session started on an empty judgments file: what `read_back` would gather,
    #: counted as the records are written (None when it cannot stand in for reading back)
    tally: ReadBack | None = None

    def count(self, record: Judgment) -> None:
        self.new_records += 1
        self.key_hashes.append(hash(record.key))
        self.ledger.count(record)


@dataclass
class ReadBack:
    """What the end of a job needs from judgments.jsonl, gathered in one streamed pass."""

    latest: RecordStats  # the latest record of each key
    every: RecordStats  # every record
    spent: UsageSum  # usage of every record not answered from the cache
    fallbacks: Counter[str]  # labels of latest ok records read by a fallback parser
    #: latest records for `derive_qrels`, in the order their keys first appear: label records
    #: as `LabelView`s (what aggregation reads), the (few) stage records in full -- or, when
    #: ``labels`` is set, nothing: the labels were gathered as they were read
    records: list[Any]
    #: the pointwise labels gathered in the pass (`reljudge.run.derive.streamed_labels`), when
    #: the judge's labels are pointwise and scored by their shape
    labels: StreamedLabels | None = None
    #: why the labels cannot become qrels (two ok records of one document disagree)
    label_error: str | None = None

    def gather(self, item: Any) -> None:
        """Keep one latest record for deriving the qrels (see ``records`` and ``labels``)."""
        if self.labels is None:
            self.records.append(item)
        elif self.label_error is None:
            try:
                self.labels.add(item)
            except NotPointwise:
                raise
            except ValueError as err:  # conflicting labels: reported by `derive_streamed`
                self.label_error = str(err)

    @classmethod
    def empty(cls) -> ReadBack:
        from reljudge.io.rundir import RecordStats

        return cls(RecordStats(), RecordStats(), UsageSum(), Counter(), [])

    @classmethod
    def tally(cls) -> ReadBack:
        """The counts of records written to an empty file, each under its own key ("latest" and
        "every" are then the same counts, one object), kept as they are written. ``records``
        stays empty: holding a view of every record for the whole run would make memory grow
        with the run; they are read back at the end (`read_back`)."""
        from reljudge.io.rundir import RecordStats

        stats = RecordStats()
        return cls(stats, stats, UsageSum(), Counter(), [])

    def count_new(self, record: Judgment) -> None:
        """Count a new record for a `tally` (see there)."""
        self.every.add(record)  # = self.latest
        provenance = record.provenance
        if not provenance.cached:
            self.spent.add(provenance.usage)
        if record.status == "ok" and record.parse and record.parse.startswith("fallback"):
            self.fallbacks[record.parse] += 1


def read_back(job: PreparedJob, session: Session) -> ReadBack:
    """One streamed pass over judgments.jsonl. Which records are replaced by a later one of the
    same key is known without holding the keys: from the start-of-session index plus the keys
    this session wrote. Only when this session wrote one key twice (no built-in judge does) is
    the file indexed again to find out exactly.

    When the judge's labels are pointwise and scored by their shape, they are gathered in the
    pass (`ReadBack.labels`) rather than kept as records; should a record turn out not to be a
    pointwise label, the file is read again keeping the records."""
    from reljudge.run.derive import streamed_labels

    labels = streamed_labels(job.judge, job.pool.docs, job.inputs.resources)
    if labels is not None:
        try:
            return _read_back(job, session, labels)
        except NotPointwise:
            pass
    return _read_back(job, session, None)


def _read_back(job: PreparedJob, session: Session, labels: StreamedLabels | None) -> ReadBack:
    from reljudge.io.judgments import LabelView, scan_judgments

    superseded = session.superseded
    hashes = sorted(session.key_hashes)
    twice = any(a == b for a, b in zip(hashes, hashes[1:], strict=False))
    del hashes
    methods = frozenset(label_methods(job.judge))
    if session.tally is not None and not twice:
        # the file was empty when the session started, no key was written twice and every
        # record was counted as written: only the label views are left to read
        from reljudge.io.judgments import iter_label_views

        back = session.tally
        back.records, back.labels, back.label_error = [], labels, None
        for item in iter_label_views(job.rundir.judgments_path, methods):
            back.gather(item)
        return back
    if twice:
        superseded = job.rundir.index().superseded
    back = ReadBack.empty()
    back.labels = labels
    path = job.rundir.judgments_path
    if not path.exists():
        return back
    strings: dict[str, str] = {}
    slots: dict[tuple[str, ...], int] = {}  # replaced keys -> their place in ``records``
    records = back.records
    for ordinal, (_, record) in enumerate(scan_judgments(path)):
        back.every.add(record)
        provenance = record.provenance
        if not provenance.cached:
            back.spent.add(provenance.usage)
        if ordinal in superseded:
            slots.setdefault(record.key, len(records))
            if len(records) == slots[record.key]:
                records.append(None)
            continue
        back.latest.add(record)
        if record.status == "ok" and record.parse and record.parse.startswith("fallback"):
            back.fallbacks[record.parse] += 1
        item = LabelView.of(record, strings) if record.method in methods else record
        if labels is not None:
            back.gather(item)
            continue
        place = slots.pop(record.key, None) if slots else None
        if place is None:
            records.append(item)
        else:
            records[place] = item
    back.records = [r for r in records if r is not None]
    return back
