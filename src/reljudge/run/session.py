"""One invocation of a job: what it wrote, and what the end of a job counts in the run directory.

`Session` keeps running counters over the records an invocation writes (its `Ledger`, and the
key hashes that tell which records replace earlier ones) -- never the records themselves, so
memory does not grow with the run -- and, when it started on an empty file, the judge's scorer
that each written record is handed to (what a pointwise judge's scorer keeps: one slot a pooled
document). `ReadBack` holds the counts the end of a job needs of
``judgments.jsonl`` (the latest and all records, the usage, the parse fallbacks): counted as the
records are written when the file was empty at the start (`ReadBack.tally`), else while the end
of the job reads the file back (`reljudge.run.finish.read_back`).
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reljudge.run.ledger import Ledger, UsageSum

if TYPE_CHECKING:
    from reljudge.io.rundir import RecordStats
    from reljudge.judges.base import RecordScorer
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
    #: with a `tally`: the judge's scoring, handed each record as it is written, so that the end
    #: of the job reads nothing back (None once a record could not be scored with the others)
    scorer: RecordScorer | None = None

    def count(self, record: Judgment) -> None:
        self.new_records += 1
        self.key_hashes.append(hash(record.key))
        self.ledger.count(record)


@dataclass
class ReadBack:
    """What the end of a job counts in judgments.jsonl."""

    latest: RecordStats  # the latest record of each key
    every: RecordStats  # every record
    spent: UsageSum  # usage of every record not answered from the cache
    fallbacks: Counter[str]  # labels of latest ok records read by a fallback parser

    def count(self, record: Judgment, *, latest: bool) -> None:
        """Count one record read back (``latest``: no later record of its key replaces it)."""
        self.every.add(record)
        provenance = record.provenance
        if not provenance.cached:
            self.spent.add(provenance.usage)
        if latest:
            self.latest.add(record)
            if record.status == "ok" and record.parse and record.parse.startswith("fallback"):
                self.fallbacks[record.parse] += 1

    @classmethod
    def empty(cls) -> ReadBack:
        from reljudge.io.rundir import RecordStats

        return cls(RecordStats(), RecordStats(), UsageSum(), Counter())

    @classmethod
    def tally(cls) -> ReadBack:
        """The counts of records written to an empty file, each under its own key ("latest" and
        "every" are then the same counts, one object), kept as they are written; the records
        themselves are read back at the end (`reljudge.run.finish.read_back`)."""
        from reljudge.io.rundir import RecordStats

        stats = RecordStats()
        return cls(stats, stats, UsageSum(), Counter())

    def count_new(self, record: Judgment) -> None:
        """Count a new record for a `tally` (see there)."""
        self.every.add(record)  # = self.latest
        provenance = record.provenance
        if not provenance.cached:
            self.spent.add(provenance.usage)
        if record.status == "ok" and record.parse and record.parse.startswith("fallback"):
            self.fallbacks[record.parse] += 1
