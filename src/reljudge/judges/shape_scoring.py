"""Scoring records by their shape, for methods that leave scoring to it: a ``docid`` alone is a
pointwise label (`label_scores`), ``docid`` and ``docid_b`` a comparison (win counts,
`pairwise_sets`). The default of `reljudge.judges.base.Judge.score_records` -- so the scorer of
every pointwise judge, at the end of a run as in ``judge export`` -- and how
`reljudge.judges.scoring` scores records no judge declares.

Pointwise labels are gathered one record at a time (`PointwiseLabels`), with
`reljudge.aggregation.exclusions.collect`'s rules: an ``ok`` record wins over failed ones (a
retried failure: ``superseded``), identical ``ok`` records count once (``duplicates``), two ``ok``
records of one document with different labels are an error; a failed record is no label (left
out, or 0 with ``on_failure="zero"``) and is counted in the `Exclusions`. Only the labels are
kept, never the records, so memory does not grow with a record's size. Given a job's pool
(``order``, ``{qid: [docid, ...]}``, what the end of a run passes), a pooled document's label
takes one slot of a list aligned with a sorted copy of its topic's docids (found by bisection:
about 16 bytes a document, the pool's own strings), and the scores are a read-only mapping that
builds one topic's dictionary at a time: the end of a run over 100,000 judgments stays flat.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, ItemsView, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

from reljudge.aggregation.exclusions import Exclusions, check_policy, single_method
from reljudge.aggregation.score_sets import AggregatedScores
from reljudge.judges.pairwise.preferences import WIN_COUNTS, _pair_key, count_wins

__all__ = [
    "EXPECTED_SUFFIX",
    "PointwiseLabels",
    "ShapeScorer",
    "label_scores",
    "pairwise_sets",
    "shape_scores",
    "shape_sets",
]

Grade = int | float


class _Failed(str):
    """The status of a failed record in a slot (a label is a number, never a `_Failed`)."""

    __slots__ = ()


_EMPTY = None


class PointwiseLabels:
    """Pointwise labels of one record method, added record by record (`add`), and what was
    left out (`finish`).

    Order of the scores (`topics`): the pool's topics and documents in the pool's order (a failed
    document, counted as 0, in its place); then each topic's other documents in the order of
    their first ``ok`` record, and, counted as 0, the failed ones in the order they first failed;
    then the other topics the same way. Without a pool: the order of the records, as
    `collect` keeps them.
    """

    def __init__(self, order: Mapping[str, Sequence[str]] | None = None, *, on_failure: str = "exclude"):
        check_policy(on_failure)
        self.on_failure = on_failure
        self.pooled = order is not None
        self._order: Mapping[str, Sequence[str]] = order if order is not None else {}
        self._sorted: dict[str, list[str]] = {}  # pooled topic -> its docids, sorted
        self._slots: dict[str, list[Any]] = {}  # pooled topic -> label, _Failed or _EMPTY per docid
        #: documents outside the pool: their ok labels {qid: {docid: label}} (first-ok order)...
        self._ok: dict[str, dict[str, Grade]] = {}
        #: ... and the failed ones {(qid, docid): status} (first-failure order)
        self._failed: dict[tuple[str, str], _Failed] = {}
        self.exclusions = Exclusions(policy=on_failure)
        self._finished = False

    def _slot(self, qid: str, docid: str) -> tuple[list[Any], int] | None:
        """(slots, index) of a pooled document, None for another one."""
        keys = self._sorted.get(qid)
        if keys is None:
            docs = self._order.get(qid)
            if docs is None:
                return None
            keys = self._sorted[qid] = sorted(docs)
            self._slots[qid] = [_EMPTY] * len(keys)
        i = bisect_left(keys, docid)
        if i < len(keys) and keys[i] == docid:
            return self._slots[qid], i
        return None

    def add(self, record: Any) -> None:
        """Count one record (a `Judgment` or a `reljudge.io.judgments.BareRecord`). ValueError for
        a record that is not a pointwise label, and for two ``ok`` records of one document with
        different labels."""
        qid, docid = record.qid, record.docid
        if docid is None or record.docid_b is not None or record.item_id is not None:
            raise ValueError(
                f"not a pointwise record (topic {qid}: docid={docid!r}, docid_b={record.docid_b!r}, "
                f"item_id={record.item_id!r}); pass the matching method (pairwise, exam, nuggets)"
            )
        ok = record.status == "ok"
        ex = self.exclusions
        slot = self._slot(qid, docid)
        if slot is not None:
            slots, i = slot
            prev = slots[i]
            if ok:
                if prev is not _EMPTY and not isinstance(prev, _Failed):
                    self._same(qid, docid, prev, record.label)
                    return
                if prev is not _EMPTY:  # a failure, retried
                    ex.superseded += 1
                slots[i] = record.label
            elif prev is _EMPTY:
                slots[i] = _Failed(record.status)
            else:  # an ok record exists, or an earlier failure failed again
                ex.superseded += 1
                if isinstance(prev, _Failed):
                    slots[i] = _Failed(record.status)
            return
        key = (qid, docid)
        docs = self._ok.get(qid)
        if ok:
            if docs is not None and docid in docs:
                self._same(qid, docid, docs[docid], record.label)
                return
            self._ok.setdefault(qid, {})[docid] = record.label
            if key in self._failed:
                del self._failed[key]
                ex.superseded += 1
        elif docs is not None and docid in docs:
            ex.superseded += 1
        elif key in self._failed:
            ex.superseded += 1  # an earlier failure retried and failed again
            self._failed[key] = _Failed(record.status)
        else:
            self._failed[key] = _Failed(record.status)

    def _same(self, qid: str, docid: str, prev: Any, label: Any) -> None:
        if prev != label:
            raise ValueError(f"conflicting judgments for {(qid, docid)}: {prev!r} and {label!r}")
        self.exclusions.duplicates += 1

    def _pooled(self, qid: str) -> Iterator[tuple[str, Any]]:
        """(docid, slot value) of a pooled topic's filled slots, in the pool's order."""
        slots = self._slots.get(qid)
        if slots is None:
            return
        keys = self._sorted[qid]
        for docid in self._order[qid]:
            value = slots[bisect_left(keys, docid)]
            if value is not _EMPTY:
                yield docid, value

    def _failed_by_topic(self) -> dict[str, list[str]]:
        by_topic: dict[str, list[str]] = {}
        for qid, docid in self._failed:
            by_topic.setdefault(qid, []).append(docid)
        return by_topic

    def _topics(self) -> Iterator[str]:
        """Every topic with a record, in the order of `topics`."""
        yield from self._order
        yield from (qid for qid in self._ok if qid not in self._order)
        if self.on_failure == "zero":
            seen: set[str] = set()
            for qid, _ in self._failed:
                if qid not in self._order and qid not in self._ok and qid not in seen:
                    seen.add(qid)
                    yield qid

    def topic(self, qid: str, failed: Mapping[str, list[str]] | None = None) -> dict[str, Grade]:
        """One topic's scores ``{docid: score}`` (empty for a topic without any)."""
        zero = self.on_failure == "zero"
        if qid not in self._slots and not zero:
            return self._ok.get(qid, {})  # no pooled document: the labels as they were kept
        docs: dict[str, Grade] = {}
        for docid, value in self._pooled(qid):
            if not isinstance(value, _Failed):
                docs[docid] = value
            elif zero:
                docs[docid] = 0
        docs.update(self._ok.get(qid, {}))
        if zero:
            for docid in (failed if failed is not None else self._failed_by_topic()).get(qid, ()):
                docs[docid] = 0
        return docs

    def topics(self) -> Iterator[tuple[str, dict[str, Grade]]]:
        """(qid, {docid: score}) topic by topic, only the topics with a score: the ``ok`` labels,
        and the failed records as 0 with ``on_failure="zero"``. One topic's dictionary at a time
        is built."""
        failed = self._failed_by_topic() if self.on_failure == "zero" else {}
        for qid in self._topics():
            docs = self.topic(qid, failed)
            if docs:
                yield qid, docs

    def finish(self) -> Exclusions:
        """The exclusions, with the failed records counted (call once, after the last `add`):
        pooled topics first, each with its failed documents in the pool's order and then its
        other ones; then the failures of the other topics, in the order they came."""
        ex = self.exclusions
        if self._finished:
            return ex
        self._finished = True
        others: dict[str, list[tuple[str, str]]] = {}  # pooled topic -> its other failed documents
        for (qid, docid), status in self._failed.items():
            if qid in self._order:
                others.setdefault(qid, []).append((docid, status))
        for qid in self._order:
            for docid, value in self._pooled(qid):
                if isinstance(value, _Failed):
                    self._count(qid, docid, value)
            for docid, other in others.get(qid, ()):
                self._count(qid, docid, other)
        for (qid, docid), status in self._failed.items():
            if qid not in self._order:
                self._count(qid, docid, status)
        return ex

    def _count(self, qid: str, docid: str, status: str) -> None:
        ex = self.exclusions
        ex.failed[str(status)] += 1
        ex.failed_keys.append((qid, docid))
        if self.on_failure == "zero":
            ex.zeroed += 1

    def score_set(self, method: str) -> AggregatedScores:
        """The labels as one score set: over a pool, a read-only mapping of the topics, each
        built when it is read (`_Scores`, standing in for the dictionary); otherwise a dictionary."""
        exclusions = self.finish()
        if self.pooled:
            scores = cast("dict[str, dict[str, float]]", _Scores(self))
        else:
            scores = dict(self.topics())
        return AggregatedScores(method=method, scores=scores, exclusions=exclusions)


class _Scores(Mapping[str, dict[str, Grade]]):
    """``{qid: {docid: score}}`` of `PointwiseLabels` over a pool: read-only, each topic's
    dictionary built when it is read, ``items()`` one topic at a time."""

    def __init__(self, labels: PointwiseLabels):
        self._labels = labels

    def __getitem__(self, qid: str) -> dict[str, Grade]:
        docs = self._labels.topic(qid)
        if not docs:
            raise KeyError(qid)
        return docs

    def __iter__(self) -> Iterator[str]:
        return (qid for qid, _ in self._labels.topics())

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def items(self) -> _TopicItems:
        return _TopicItems(self)


class _TopicItems(ItemsView[str, dict[str, Grade]]):
    """The items of `_Scores`, one topic's dictionary built at a time."""

    _mapping: _Scores

    def __iter__(self) -> Iterator[tuple[str, dict[str, Grade]]]:
        return self._mapping._labels.topics()


def label_scores(
    records: Iterable[Any],
    *,
    on_failure: str = "exclude",
    order: Mapping[str, Sequence[str]] | None = None,
) -> AggregatedScores:
    """Pointwise labels as scores, read once, record by record (`PointwiseLabels`); failed
    records excluded (or 0 with ``on_failure="zero"``). ``order``: a job's pool, ``{qid: [docid,
    ...]}`` (see the module doc). ValueError for records of several methods, a record that is
    not a pointwise label, or contradicting labels."""
    labels = PointwiseLabels(order, on_failure=on_failure)
    methods: set[str] = set()
    error: ValueError | None = None
    for record in records:
        methods.add(record.method)
        if error is None:
            try:
                labels.add(record)
            except ValueError as err:  # raised once every record is read: a mix of methods first
                error = err
    if len(methods) > 1:
        raise ValueError(f"judgments of several methods mixed: {', '.join(sorted(methods))}")
    if error is not None:
        raise error
    return labels.score_set(next(iter(methods), "pointwise"))


class _Expected:
    """The expected grades of one pointwise method's ``ok`` records (``extra["expected"]``,
    `reljudge.judges.expected`), gathered with its labels (`expected_set`)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], float] = {}
        self.found = self.argmax = 0
        self.outside = 0.0
        self.scale: list[int] | None = None

    def add(self, record: Any) -> None:
        if record.status != "ok":
            return
        extra = getattr(record, "extra", None)  # a bare record (the end of a run) carries no extra
        info = extra.get("expected") if isinstance(extra, dict) else None
        if isinstance(info, dict) and isinstance(info.get("expected"), (int, float)):
            self.values[(record.qid, record.docid)] = float(info["expected"])
            self.outside += float(info.get("outside") or 0.0)
            self.scale = self.scale or list(info.get("scale") or [])
            self.found += 1
        else:
            self.argmax += 1


#: the suffix of the score set of expected grades (`expected_set`)
EXPECTED_SUFFIX = "-expected"


def expected_set(expected: _Expected, labels: AggregatedScores) -> AggregatedScores | None:
    """The ``<method>-expected`` set of one pointwise method: each document's expected grade
    from the distribution at its label position; a labelled record without one keeps its label
    (the argmax), and ``details`` counts them (``argmax``), with the judge's ``scale`` and the
    mean ``outside`` mass. None when no record has a distribution."""
    if not expected.found:
        return None
    scores = {q: dict(d) for q, d in labels.scores.items()}
    for (qid, docid), value in expected.values.items():
        if docid in scores.get(qid, {}):
            scores[qid][docid] = value
    scale = expected.scale
    details = {
        "scale": [min(scale), max(scale)] if scale else None,
        "distributions": expected.found,
        "argmax": expected.argmax,
        "mean_outside": expected.outside / expected.found,
    }
    method = labels.method + EXPECTED_SUFFIX
    return AggregatedScores(method, scores, labels.exclusions, details, family=labels.family)


class _Group:
    """The records of one record method, gathered as they come: pointwise labels (with their
    expected grades), or the comparisons of a pairwise method (kept: win counts need them all)."""

    def __init__(self, kind: str, order: Mapping[str, Sequence[str]] | None, on_failure: str):
        self.kind = kind
        self.labels = PointwiseLabels(order, on_failure=on_failure) if kind == "pointwise" else None
        self.expected = _Expected()
        self.pairs: list[Any] = []
        self.error: ValueError | None = None  # raised once every record is grouped

    def add(self, record: Any) -> None:
        if self.labels is None:
            self.pairs.append(record)
            return
        if self.error is None:
            try:
                self.labels.add(record)
            except ValueError as err:
                self.error = err
        self.expected.add(record)


class ShapeScorer:
    """`shape_sets` one record at a time: `add` each record as it comes (a run hands them on as
    it writes them), `finish` for the score sets. An error a record causes (two record kinds
    under one method, a graded item no judge declares) is raised by `add` for the shape and by
    `finish` for labels that contradict each other, as `shape_sets` raises them."""

    def __init__(
        self,
        *,
        on_failure: str = "exclude",
        ties: str = "none",
        lengths: Mapping[str, int] | None = None,
        order: Mapping[str, Sequence[str]] | None = None,
        methods: Collection[str] | None = None,
        **_: Any,
    ):
        check_policy(on_failure)
        self.on_failure, self.ties, self.lengths, self.order = on_failure, ties, lengths, order
        self.methods = None if methods is None else frozenset(methods)
        self.groups: dict[str, _Group] = {}

    def add(self, r: Any) -> None:
        if r.docid is None or (self.methods is not None and r.method not in self.methods):
            return  # stage or topic-level records, or another judge's
        if r.docid_b is not None:
            kind = "pairwise"
        elif r.item_id is None:
            kind = "pointwise"
        else:
            raise ValueError(
                f"records of method {r.method!r} grade items (item_id) of passages, and no judge "
                "declares that method: install the judge that made them to score them"
            )
        group = self.groups.get(r.method)
        if group is None:
            group = self.groups[r.method] = _Group(kind, self.order, self.on_failure)
        elif group.kind != kind:
            raise ValueError(f"records of method {r.method!r} mix {group.kind} and {kind} judgments")
        group.add(r)

    def finish(self) -> dict[str, AggregatedScores]:
        out: dict[str, AggregatedScores] = {}
        for method, group in self.groups.items():
            if group.labels is None:
                result = pairwise_sets(
                    group.pairs, on_failure=self.on_failure, ties=self.ties, lengths=self.lengths
                )
            elif group.error is not None:
                raise group.error
            else:
                result = group.labels.score_set(method)
            result.family = method
            out[method] = result
            if group.labels is not None:
                found = expected_set(group.expected, result)
                if found is not None:
                    out[found.method] = found
        return out


def shape_sets(records: Iterable[Any], **options: Any) -> dict[str, AggregatedScores]:
    """Score sets of label records by their shape, one per record method, the records read once:
    pointwise labels (``docid``; ``order``: a job's pool, see the module doc), or pairwise win
    counts (``docid`` and ``docid_b``; ``ties`` and ``lengths`` go to `count_wins`, and the ``ok``
    comparisons are kept in ``details["preferences"]``). Records without a passage, and those of
    other record methods than ``methods`` (when given: a judge's own), are skipped. Options:
    `ShapeScorer`'s (``on_failure``, ``ties``, ``lengths``, ``order``, ``methods``)."""
    scorer = ShapeScorer(**options)
    for r in records:
        scorer.add(r)
    return scorer.finish()


def pairwise_sets(
    group: Sequence[Any],
    *,
    on_failure: str = "exclude",
    ties: Any = "none",
    lengths: Mapping[str, int] | None = None,
) -> AggregatedScores:
    """The win counts of one record method's comparisons (`count_wins`), with the ``ok``
    comparisons in ``details["preferences"]`` (one per unordered pair)."""
    if on_failure != "exclude":
        raise ValueError("a failed comparison gives no win; on_failure must be 'exclude' for pairwise")
    prefs = count_wins(group, ties=ties, lengths=lengths)
    seen: set[tuple[str, str, str]] = set()
    comparisons: list[tuple[str, str, str, int]] = []
    for r in group:
        if r.status != "ok" or r.label is None:
            continue
        k = _pair_key(r)
        if k not in seen:
            seen.add(k)
            comparisons.append((r.qid, r.docid, r.docid_b, int(r.label)))
    method = group[0].method if group else "pairwise"
    return AggregatedScores(
        method=method,
        scores=prefs.scores,
        exclusions=prefs.exclusions,
        details={"never_won": prefs.never_won, "ties": ties, "preferences": comparisons},
        meaning=WIN_COUNTS,
    )


def shape_scores(
    name: str, records: Sequence[Any], *, pairwise: bool = False, **options: Any
) -> AggregatedScores:
    """The scores of one record method ``name`` by its records' shape: win counts when
    ``pairwise`` or when its records are pairs, labels otherwise (a record that is not a
    pointwise label is then a ValueError). ``options``: ``on_failure``, ``ties``, ``lengths``."""
    on_failure = options.get("on_failure", "exclude")
    recorded = single_method(records)
    if recorded is not None and name == recorded + EXPECTED_SUFFIX:
        sets = shape_sets(records, on_failure=on_failure)
        if name not in sets:
            raise ValueError(f"no {name!r} scores: the records hold no log-probability distribution")
        return sets[name]
    pairwise = pairwise or (recorded == name and any(r.docid_b for r in records))
    if pairwise and on_failure != "exclude":
        raise ValueError("a failed comparison gives no win; on_failure must be 'exclude' for pairwise")
    if not pairwise:
        if options.get("score") is not None:
            raise ValueError(f"method {name!r} is pointwise and takes no score option")
        for r in records:
            if r.docid is None or r.docid_b is not None or r.item_id is not None:
                raise ValueError(
                    f"not a pointwise record (topic {r.qid}: docid={r.docid!r}, docid_b={r.docid_b!r}, "
                    f"item_id={r.item_id!r}); pass the matching method (pairwise, exam, nuggets)"
                )
    check_policy(on_failure)
    found = shape_sets(
        records, **{k: v for k, v in options.items() if k in ("on_failure", "ties", "lengths")}
    )
    if found:
        (result,) = found.values()
        result.details.pop("preferences", None)
    elif pairwise:  # no records
        result = AggregatedScores(
            name, {}, Exclusions(), {"never_won": {}, "ties": options.get("ties", "none")}
        )
    else:
        result = AggregatedScores(name, {}, Exclusions(policy=on_failure))
    result.method = name
    return result
