"""Document scores of one method (`AggregatedScores`) and the scores of pointwise labels.

Which method scores which records is the judges' business (`reljudge.judges.scoring`); this
module holds the result type they share and the plain case: a pointwise label is the document's
score (`label_scores`). Every result carries the `Exclusions` summary; nothing that failed becomes
a 0 unless the caller asks for ``on_failure="zero"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reljudge.aggregation.exclusions import Exclusions, FailurePolicy, check_policy, collect, single_method
from reljudge.records import Judgment


@dataclass
class AggregatedScores:
    """Document scores of one method, what was excluded, and method-specific details
    (``never_won`` for pairwise, the chosen ``score`` for EXAM and nuggets)."""

    method: str
    scores: dict[str, dict[str, float]]
    exclusions: Exclusions
    details: dict[str, Any] = field(default_factory=dict)
    #: the judging method (or record method) the set comes from: several sets share one
    family: str = ""
    #: whether this is the set a run of that method takes as its qrels
    primary: bool = False
    #: (qid, docid) of documents whose score rests on an incomplete set of records (an
    #: interrupted run: not yet graded on every question, assessed against every nugget)
    incomplete: list[tuple[str, str]] = field(default_factory=list)


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


def split_set_name(
    name: str, family: str, default: str | None, given: str | None, allowed: tuple[str, ...]
) -> str:
    """The score a set name picks within a method's family of scores: ``family-<score>`` names
    it, else ``given``, else ``default`` (``exam-graded-mean`` -> ``graded-mean``)."""
    variant = name[len(family) + 1 :] if name.startswith(family + "-") else None
    if variant is not None and given is not None and variant != given:
        raise ValueError(f"method {name!r} contradicts score={given!r}")
    choice = variant or given or default
    if choice is None:
        raise ValueError(f"method {family!r} needs a score: one of {', '.join(allowed)}")
    if choice not in allowed:
        raise ValueError(f"unknown {family} score {choice!r}; choose one of {', '.join(allowed)}")
    return choice
