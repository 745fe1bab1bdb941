"""A score set: the document scores of one method (`AggregatedScores`), what its values mean as
the judge that makes them declares it (`ScoreMeaning`), and how a set's name picks one score of a
method's family (`split_set_name`).

Which method scores which records is the judges' business (`reljudge.judges.scoring`; records
scored by their shape, pointwise labels and win counts: `reljudge.judges.shape_scoring`). Every
set carries the `Exclusions` summary; nothing that failed becomes a 0 unless the caller asks for
``on_failure="zero"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reljudge.aggregation.exclusions import Exclusions


@dataclass(frozen=True)
class ScoreMeaning:
    """What the values of a score set mean, as the judge that makes them declares it
    (`reljudge.judges.base.Judge.score_meaning`), so that an analysis reads every set by its own
    scale instead of guessing from the values:

    - ``what``: the values in words, printed with the numbers (``win counts: comparisons won``);
    - ``gains``: whether the values are gains, usable as graded relevance (nDCG gains when the set
      becomes qrels). A count of wins or a share of questions is not: its size depends on the
      pool or on the questions, not on how relevant a passage is;
    - ``grades``: whether the values are grades on the human scale (a pointwise label: graded
      κ/α against the human grades; a value outside the human scale is off the scale);
    - ``scale``: the range [lo, hi] the values are declared to lie in, when it is not the human
      scale (0-1 for a share, 0-5 for a self-rating); None: the human scale for ``grades``,
      unbounded otherwise (a count). A value outside it is off the scale;
    - ``cut`` / ``strict``: the binary cut, relevant is ``score >= cut`` (``> cut`` when
      ``strict``); None: the human relevance level (``>= 2`` on TREC DL grades; on the judge's
      own scale for float scores that declare one, expected grades).
    """

    what: str
    gains: bool
    grades: bool = False
    scale: tuple[float, float] | None = None
    cut: float | None = None
    strict: bool = False


@dataclass
class AggregatedScores:
    """Document scores of one method, what was excluded, and method-specific details
    (``never_won`` for pairwise, the chosen ``score`` for EXAM and nuggets).

    ``scores`` is ``{qid: {docid: score}}``; for labels gathered over a job's pool (the end of a
    run) it is a read-only mapping standing in for that dictionary, which builds one topic's
    dictionary when it is read (`reljudge.judges.shape_scoring.PointwiseLabels`)."""

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
    #: what the values mean, as the judge that scored them declares it (None: not declared)
    meaning: ScoreMeaning | None = None


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
