"""From judgment records to document scores ``{qid: {docid: score}}`` (LLM qrels), any method.

`judgments_to_scores` dispatches on the method:

- pointwise (``binary``, ``umbrela``, ``graded``, ``custom`` or any other name): the label;
- ``exam`` / ``exam-binary`` / ``exam-graded-max`` / ``exam-graded-mean``: an EXAM score
  (`reljudge.aggregation.exam`);
- ``nuggets`` / ``nuggets-<score>`` (``all``, ``all-strict``, ``vital``, ``vital-strict``,
  ``weighted``, ``weighted-strict``): a nugget score (`reljudge.aggregation.nuggets`);
- ``pairwise`` (alias ``preferences``), or the records' own method on pairwise records (a
  custom pairwise judge): win counts (`reljudge.aggregation.preferences`).

Pointwise and pairwise records go through `reljudge.aggregation.sets.score_sets`, the one
records-to-scores path of derived qrels, ``judge evaluate`` and ``judge export``.

The compound names match the published gpt-4o file names (``exam-graded-max.dl19.qrels``).
Every result carries the `Exclusions` summary; nothing that failed becomes a 0 unless the
caller asks for ``on_failure="zero"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reljudge.aggregation.exam import EXAM_SCORES, QuestionBank, exam_scores
from reljudge.aggregation.exclusions import Exclusions, FailurePolicy, check_policy, collect, single_method
from reljudge.aggregation.nuggets import NUGGET_SCORES, EmptyClass, Nugget, Weighting, nugget_scores
from reljudge.aggregation.preferences import TiePolicy
from reljudge.records import Judgment

EXAM_METHOD = "exam"
NUGGETS_METHOD = "nuggets"
PAIRWISE_METHODS: tuple[str, ...] = ("pairwise", "preferences")


@dataclass
class AggregatedScores:
    """Document scores of one method, what was excluded, and method-specific details
    (``never_won`` for pairwise, the chosen ``score`` for EXAM and nuggets)."""

    method: str
    scores: dict[str, dict[str, float]]
    exclusions: Exclusions
    details: dict[str, Any] = field(default_factory=dict)


def _point_key(j: Judgment) -> tuple[str, str]:
    if j.docid is None or j.docid_b is not None or j.item_id is not None:
        raise ValueError(
            f"not a pointwise record (topic {j.qid}: docid={j.docid!r}, docid_b={j.docid_b!r}, "
            f"item_id={j.item_id!r}); pass the matching method (pairwise, exam, nuggets)"
        )
    return (j.qid, j.docid)


def label_scores(judgments: Iterable[Judgment], *, on_failure: FailurePolicy = "exclude") -> AggregatedScores:
    """Pointwise labels as scores; failed records excluded (or 0 with ``on_failure="zero"``)."""
    check_policy(on_failure)
    records = list(judgments)
    method = single_method(records) or "pointwise"
    exclusions = Exclusions(policy=on_failure)
    ok, failed = collect(records, _point_key, exclusions)
    scores: dict[str, dict[str, float]] = {}
    for (qid, docid), j in ok.items():
        assert j.label is not None
        scores.setdefault(qid, {})[docid] = j.label
    if on_failure == "zero":
        for qid, docid in failed:
            scores.setdefault(qid, {})[docid] = 0
            exclusions.zeroed += 1
    return AggregatedScores(method=method, scores=scores, exclusions=exclusions)


def _split(method: str, family: str, default: str | None, given: str | None, allowed: tuple[str, ...]) -> str:
    variant = method[len(family) + 1 :] if method.startswith(family + "-") else None
    if variant is not None and given is not None and variant != given:
        raise ValueError(f"method {method!r} contradicts score={given!r}")
    choice = variant or given or default
    if choice is None:
        raise ValueError(f"method {family!r} needs a score: one of {', '.join(allowed)}")
    if choice not in allowed:
        raise ValueError(f"unknown {family} score {choice!r}; choose one of {', '.join(allowed)}")
    return choice


def judgments_to_scores(
    judgments: Iterable[Judgment],
    method: str,
    *,
    score: str | None = None,
    questions: QuestionBank | None = None,
    min_rating: int | None = None,
    nuggets: Iterable[Nugget] | None = None,
    empty_class: EmptyClass = "undefined",
    weighted: Weighting = "trec",
    ties: TiePolicy = "none",
    lengths: Mapping[str, int] | None = None,
    on_failure: FailurePolicy = "exclude",
) -> AggregatedScores:
    """Document scores ``{qid: {docid: score}}`` from the records of one method.

    `score` picks the EXAM score (default ``binary``) or the nugget score (default ``all``)
    unless the method name carries it (``exam-graded-mean``). `nuggets` is required for the
    nugget method. Records of several methods mixed raise ValueError.
    """
    records = list(judgments)
    recorded = single_method(records)
    if method == EXAM_METHOD or method.startswith(EXAM_METHOD + "-"):
        choice = _split(method, EXAM_METHOD, "binary", score, EXAM_SCORES)
        exam = exam_scores(
            records,
            choice,
            questions=questions,
            min_rating=min_rating,
            on_failure=on_failure,  # type: ignore[arg-type]
        )
        return AggregatedScores(
            method=f"exam-{choice}", scores=exam.scores, exclusions=exam.exclusions, details={"score": choice}
        )
    if method == NUGGETS_METHOD or method.startswith(NUGGETS_METHOD + "-"):
        choice = _split(method, NUGGETS_METHOD, "all", score, NUGGET_SCORES)
        if nuggets is None:
            raise ValueError("the nuggets method needs the nuggets the passages were assessed against")
        result = nugget_scores(
            records, nuggets, on_failure=on_failure, empty_class=empty_class, weighted=weighted
        )
        return AggregatedScores(
            method=f"nuggets-{choice}",
            scores=result.qrels(choice),
            exclusions=result.exclusions,
            details={"score": choice},
        )
    # any other method: pointwise labels, or win counts for pairwise records (the pairwise
    # method names, or a custom judge's own method on pairs), through `score_sets`
    from reljudge.aggregation.sets import score_sets

    pairwise = method in PAIRWISE_METHODS or (recorded == method and any(j.docid_b for j in records))
    if pairwise and on_failure != "exclude":
        raise ValueError("a failed comparison gives no win; on_failure must be 'exclude' for pairwise")
    if not pairwise:
        if score is not None:
            raise ValueError(f"method {method!r} is pointwise and takes no score option")
        for j in records:
            _point_key(j)  # a pair or item record: tell the caller which method aggregates it
    check_policy(on_failure)
    found = score_sets(records, ties=ties, lengths=lengths, on_failure=on_failure)
    if found:
        (result,) = found.values()
        result.details.pop("preferences", None)
    elif pairwise:  # no records
        result = AggregatedScores(method, {}, Exclusions(), {"never_won": {}, "ties": ties})
    else:
        result = AggregatedScores(method, {}, Exclusions(policy=on_failure))
    result.method = "pairwise" if method in PAIRWISE_METHODS else method
    return result
