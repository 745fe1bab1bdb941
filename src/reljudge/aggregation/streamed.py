"""Pointwise labels gathered one record at a time (`StreamedLabels`), in memory that does not
grow with a record's size: what the end of a run needs to write ``qrels.txt``.

`reljudge.aggregation.qrels.label_scores` takes a list of records and keys them by
``(qid, docid)`` tuples: at 100,000 judgments the record views, the tuples and the dictionaries
together held about 30 MB at the end of a run. `StreamedLabels` keeps, for the documents a job
pooled, one slot per document in a list aligned with a sorted copy of the pool's docids (found
by bisection: about 16 bytes per document, reusing the pool's strings); only records of
documents outside the pool (a job run earlier with a larger ``limit``) go to a dictionary.

The outcome is the one of `label_scores` (``collect``'s rules: an ``ok`` record wins over failed
ones, identical ``ok`` records count once, different ``ok`` labels are an error) -- only the
order of topics and documents differs: the pool's order, then the other documents in the order
they first appear.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from reljudge.aggregation.exclusions import Exclusions, check_policy
from reljudge.aggregation.qrels import AggregatedScores


class NotPointwise(ValueError):
    """A record that is not a pointwise label (a pair, a per-item grade): score the records
    with `reljudge.judges.scoring` instead."""


class _Failed(str):
    """The status of a failed record in a slot (a label is a number, never a `_Failed`)."""

    __slots__ = ()


_EMPTY = None


class StreamedLabels:
    """Pointwise labels of one or more record methods, added record by record (`add`).

    ``order``: the pool, ``{qid: [docid, ...]}``; its documents get compact slots. ``on_failure``
    as for `label_scores` (``exclude`` or ``zero``).
    """

    def __init__(
        self,
        order: Mapping[str, Sequence[str]],
        *,
        on_failure: str = "exclude",
        methods: Collection[str] | None = None,
    ):
        check_policy(on_failure)
        #: the record methods gathered (None: every method); records of others are ignored
        self.methods = frozenset(methods) if methods is not None else None
        self.on_failure = on_failure
        self._order = order
        self._sorted: dict[str, list[str]] = {}
        self._slots: dict[str, list[Any]] = {}
        #: records of documents outside ``order``: {qid: {docid: label or _Failed}}
        self._other: dict[str, dict[str, Any]] = {}
        self.exclusions = Exclusions(policy=on_failure)
        self.method: str | None = None
        self._finished = False

    def _slot(self, qid: str, docid: str) -> tuple[Any, Any]:
        """(container, index) of the document's slot."""
        keys = self._sorted.get(qid)
        if keys is None and qid in self._order:
            keys = self._sorted[qid] = sorted(self._order[qid])
            self._slots[qid] = [_EMPTY] * len(keys)
        if keys is not None:
            i = bisect_left(keys, docid)
            if i < len(keys) and keys[i] == docid:
                return self._slots[qid], i
        return self._other.setdefault(qid, {}), docid

    def add(self, record: Any) -> None:
        """Count one record (a `Judgment` or a `LabelView`). Raises `NotPointwise` for a record
        that is not a pointwise label, ValueError for two ``ok`` records of one document with
        different labels."""
        if self.methods is not None and record.method not in self.methods:
            return
        if record.docid is None or record.docid_b is not None or record.item_id is not None:
            raise NotPointwise(f"record of method {record.method!r} is not a pointwise label")
        if record.method != self.method:
            if self.method is not None:
                raise NotPointwise(f"records of methods {self.method!r} and {record.method!r} mixed")
            self.method = record.method
        box, i = self._slot(record.qid, record.docid)
        prev = box[i] if isinstance(box, list) else box.get(i, _EMPTY)
        ex = self.exclusions
        if record.status == "ok":
            if prev is not _EMPTY and not isinstance(prev, _Failed):
                if prev != record.label:
                    key = (record.qid, record.docid)
                    raise ValueError(f"conflicting judgments for {key}: {prev!r} and {record.label!r}")
                ex.duplicates += 1
                return
            if prev is not _EMPTY:  # a failure, retried
                ex.superseded += 1
            box[i] = record.label
        elif prev is _EMPTY:
            box[i] = _Failed(record.status)
        else:  # an ok record exists, or an earlier failure failed again
            ex.superseded += 1
            if isinstance(prev, _Failed):
                box[i] = _Failed(record.status)

    def _entries(self) -> Iterator[tuple[str, Iterator[tuple[str, Any]]]]:
        """(qid, (docid, slot value) of the filled slots), the pool's topics first."""
        for qid in self._order:
            slots = self._slots.get(qid)
            other = self._other.get(qid)
            if slots is None and other is None:
                continue
            yield qid, self._topic(qid, slots, other)
        for qid, other in self._other.items():
            if qid not in self._order:
                yield qid, iter(other.items())

    def _topic(
        self, qid: str, slots: list[Any] | None, other: dict[str, Any] | None
    ) -> Iterator[tuple[str, Any]]:
        if slots is not None:
            keys = self._sorted[qid]
            for docid in self._order[qid]:
                value = slots[bisect_left(keys, docid)]
                if value is not _EMPTY:
                    yield docid, value
        if other:
            yield from other.items()

    def topics(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(qid, {docid: score}) topic by topic: the ``ok`` labels, and the failed records as 0
        with ``on_failure="zero"``. One topic's dictionary at a time is built."""
        zero = self.on_failure == "zero"
        for qid, entries in self._entries():
            docs = {
                d: (0 if isinstance(v, _Failed) else v)
                for d, v in entries
                if zero or not isinstance(v, _Failed)
            }
            if docs:
                yield qid, docs

    def finish(self) -> Exclusions:
        """The exclusions, with the failed records counted (call once, after the last `add`)."""
        ex = self.exclusions
        if self._finished:
            return ex
        self._finished = True
        for qid, entries in self._entries():
            for docid, value in entries:
                if isinstance(value, _Failed):
                    ex.failed[str(value)] += 1
                    ex.failed_keys.append((qid, docid))
                    if self.on_failure == "zero":
                        ex.zeroed += 1
        return ex

    def scores(self) -> AggregatedScores:
        """Everything as one `AggregatedScores` (what `label_scores` returns; for tests and small
        inputs: this builds the whole ``{qid: {docid: score}}``)."""
        exclusions = self.finish()
        return AggregatedScores(
            method=self.method or "pointwise", scores=dict(self.topics()), exclusions=exclusions
        )
