"""Alignment of judge scores with human grades over Best / Acceptable / Unacceptable pairs.

Per topic the human grades define three categories (as in Clarke's ``agree.py`` for the
Arabzadeh & Clarke study): **Best** = documents at the topic's highest grade, **Unacceptable**
= grade ``<= unacceptable`` (0 for TREC DL, 1 for ANTIQUE), **Acceptable** = in between.
For each cross-category pair the judge *agrees* when it scores the better document higher,
*ties* when the scores are equal and *disagrees* otherwise. Counts are pooled over topics
per comparison (BvU, AvU, BvA); the macro average is the mean of the three comparisons'
fractions. Same-category pairs are ignored. A topic whose highest grade is unacceptable
has no Best documents and contributes nothing. With ``average="topics"`` each comparison's
shares are instead the mean over topics (that have pairs of it) of the topic's own shares.

`ALIGNMENT` is the registered judge-quality measure (pointwise scores and preference records).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.metrics.base import JudgeLabels, JudgmentMeasure, Outcome

COMPARISONS: tuple[str, ...] = ("BvU", "AvU", "BvA")
AVERAGES: tuple[str, ...] = ("pairs", "topics")
COMPARISON_NAMES = {
    "BvU": "Best vs Unacceptable",
    "AvU": "Acceptable vs Unacceptable",
    "BvA": "Best vs Acceptable",
}

Scores = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Counts:
    agree: int = 0
    tie: int = 0
    disagree: int = 0

    @property
    def total(self) -> int:
        return self.agree + self.tie + self.disagree

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.agree + other.agree, self.tie + other.tie, self.disagree + other.disagree)

    def fractions(self) -> tuple[float, float, float]:
        """(agree, tie, disagree) as shares of the pairs; NaN when there are no pairs."""
        if self.total == 0:
            return (float("nan"),) * 3
        return (self.agree / self.total, self.tie / self.total, self.disagree / self.total)


@dataclass
class AlignmentResult:
    """Agree/tie/disagree counts per comparison, pooled over topics, plus per-topic counts."""

    counts: dict[str, Counts]
    per_topic: dict[str, dict[str, Counts]] = field(default_factory=dict)
    missing: int = 0  # human-judged documents without a judge score (their pairs are skipped)
    #: "pairs": shares over all pairs of a comparison (the thesis code); "topics": the mean over
    #: topics with pairs of each topic's shares (Eq. 4.10 read literally; needs ``per_topic``)
    average: str = "pairs"

    def __post_init__(self) -> None:
        if self.average not in AVERAGES:
            raise ValueError(f"alignment average must be one of {', '.join(AVERAGES)}, not {self.average!r}")

    def fractions(self, comparison: str) -> tuple[float, float, float]:
        if self.average == "pairs":
            return self.counts[comparison].fractions()
        rows = [t[comparison].fractions() for t in self.per_topic.values() if t[comparison].total]
        if not rows:
            return (float("nan"),) * 3
        return tuple(float(x) for x in np.mean(np.array(rows), axis=0))  # type: ignore[return-value]

    @property
    def pooled(self) -> Counts:
        """The counts of all comparisons together."""
        total = Counts()
        for comp in COMPARISONS:
            total = total + self.counts[comp]
        return total

    @property
    def macro(self) -> tuple[float, float, float]:
        """Mean of (agree, tie, disagree) over the comparisons that have pairs."""
        rows = [self.fractions(c) for c in COMPARISONS if self.counts[c].total]
        if not rows:
            return (float("nan"),) * 3
        return tuple(float(x) for x in np.mean(np.array(rows), axis=0))  # type: ignore[return-value]

    def as_dict(self) -> dict:
        out: dict = {"missing": self.missing, "average": self.average}
        for comp in COMPARISONS:
            c = self.counts[comp]
            a, t, d = self.fractions(comp)
            out[comp] = {
                "agree": c.agree,
                "tie": c.tie,
                "disagree": c.disagree,
                "pairs": c.total,
                "agree_frac": a,
                "tie_frac": t,
                "disagree_frac": d,
            }
        a, t, d = self.macro
        out["macro"] = {"agree_frac": a, "tie_frac": t, "disagree_frac": d}
        return out

    def row(self) -> dict[str, Any]:
        """One flat table row: missing, per comparison the shares and pairs, the macro shares."""
        row: dict[str, Any] = {"missing": self.missing}
        for comp in COMPARISONS:
            c = self.counts[comp]
            a, t, d = self.fractions(comp)
            row.update(
                {f"{comp}_agree": a, f"{comp}_tie": t, f"{comp}_disagree": d, f"{comp}_pairs": c.total}
            )
        a, t, d = self.macro
        row.update({"macro_agree": a, "macro_tie": t, "macro_disagree": d})
        return row


def categories(grades: Mapping[str, float], unacceptable: float = 0) -> dict[str, str]:
    """Map each document of one topic to ``"B"``, ``"A"`` or ``"U"`` (empty when no Best)."""
    if not grades:
        return {}
    top = max(grades.values())
    if top <= unacceptable:
        return {}
    return {d: "B" if g == top else ("U" if g <= unacceptable else "A") for d, g in grades.items()}


def _compare(better: np.ndarray, worse: np.ndarray) -> Counts:
    """Count pairs (x in better, y in worse) with x > y, x == y, x < y."""
    if better.size == 0 or worse.size == 0:
        return Counts()
    worse = np.sort(worse)
    below = np.searchsorted(worse, better, side="left").sum()  # worse strictly below each x
    below_or_equal = np.searchsorted(worse, better, side="right").sum()
    total = better.size * worse.size
    return Counts(int(below), int(below_or_equal - below), int(total - below_or_equal))


def human_alignment(
    qrels: Scores, judgments: Scores, *, unacceptable: float = 0, missing: float | None = None
) -> AlignmentResult:
    """Alignment of pointwise judge scores (any scale) with human grades.

    ``missing``: score given to a human-judged document the judge has no score for (e.g. 0
    for preference win counts, where unlisted documents won nothing); ``None`` skips its pairs
    and counts it in ``result.missing``. Topics of ``judgments`` not in ``qrels`` are ignored.
    """
    totals = dict.fromkeys(COMPARISONS, Counts())
    per_topic: dict[str, dict[str, Counts]] = {}
    n_missing = 0
    for qid, grades in qrels.items():
        cats = categories(grades, unacceptable)
        if not cats:
            continue
        scores = judgments.get(qid, {})
        groups: dict[str, list[float]] = {"B": [], "A": [], "U": []}
        for docid, cat in cats.items():
            s = scores.get(docid, missing)
            if s is None:
                n_missing += 1
                continue
            groups[cat].append(float(s))
        arrays = {k: np.asarray(v, dtype=float) for k, v in groups.items()}
        topic = {
            "BvU": _compare(arrays["B"], arrays["U"]),
            "AvU": _compare(arrays["A"], arrays["U"]),
            "BvA": _compare(arrays["B"], arrays["A"]),
        }
        per_topic[qid] = topic
        for comp, c in topic.items():
            totals[comp] = totals[comp] + c
    return AlignmentResult(totals, per_topic, n_missing)


_RANK = {"B": 2, "A": 1, "U": 0}
_COMPARISON = {frozenset("BU"): "BvU", frozenset("AU"): "AvU", frozenset("BA"): "BvA"}
OUTCOMES: tuple[str, ...] = ("agree", "tie", "disagree")


def classify_preferences(
    qrels: Scores, preferences: Iterable[tuple[str, str, str, int]], *, unacceptable: float = 0
) -> Iterator[tuple[str, str, str, str | None, str | None]]:
    """Classify pairwise preference records ``(qid, docid_a, docid_b, label)`` against the human
    categories: yield ``(qid, docid_a, docid_b, comparison, outcome)`` per record, where
    ``comparison`` is ``BvU``, ``AvU`` or ``BvA`` and ``outcome`` ``agree``, ``tie`` or
    ``disagree`` (`OUTCOMES`); both are None when a document of the pair has no human category
    (not judged, or its topic has no Best document). Same-category pairs are skipped.

    ``label`` 1 = ``docid_a`` preferred, 2 = ``docid_b`` preferred, 0 = tie; anything else is a
    ValueError.
    """
    cache: dict[str, dict[str, str]] = {}
    for qid, a, b, label in preferences:
        if label not in (0, 1, 2):
            raise ValueError(f"preference label must be 0, 1 or 2, got {label!r}")
        cats = cache.get(qid)
        if cats is None:
            cats = cache[qid] = categories(qrels.get(qid, {}), unacceptable)
        ca, cb = cats.get(a), cats.get(b)
        if ca is None or cb is None:
            yield qid, a, b, None, None
            continue
        if ca == cb:
            continue
        if label == 0:
            outcome = "tie"
        else:
            outcome = "agree" if (label == 1) == (_RANK[ca] > _RANK[cb]) else "disagree"
        yield qid, a, b, _COMPARISON[frozenset(ca + cb)], outcome


def preference_alignment(
    qrels: Scores, preferences: Iterable[tuple[str, str, str, int]], *, unacceptable: float = 0
) -> AlignmentResult:
    """Alignment of pairwise preference records ``(qid, docid_a, docid_b, label)`` with human grades.

    ``label`` 1 = ``docid_a`` preferred, 2 = ``docid_b`` preferred, 0 = tie. Each record on a
    cross-category pair is agree, tie or disagree by itself (`classify_preferences`);
    same-category pairs and pairs with a document the humans did not judge are skipped (the
    latter counted in ``missing``).
    """
    totals = {c: [0, 0, 0] for c in COMPARISONS}
    topics: dict[str, dict[str, list[int]]] = {}
    n_missing = 0
    slots = {outcome: i for i, outcome in enumerate(OUTCOMES)}
    for qid, _, _, comp, outcome in classify_preferences(qrels, preferences, unacceptable=unacceptable):
        if comp is None or outcome is None:
            n_missing += 1
            continue
        slot = slots[outcome]
        totals[comp][slot] += 1
        topics.setdefault(qid, {c: [0, 0, 0] for c in COMPARISONS})[comp][slot] += 1
    return AlignmentResult(
        {c: Counts(*v) for c, v in totals.items()},
        {q: {c: Counts(*v) for c, v in t.items()} for q, t in topics.items()},
        n_missing,
    )


def preferences_from_scores(
    scores: Scores, pairs: Iterable[tuple[str, str, str]], *, missing: float | None = None
) -> list[tuple[str, str, str, int]]:
    """Pointwise scores read as preferences on given pairs ``(qid, a, b)``: 1 when ``a`` scores
    higher, 2 when ``b`` does, 0 on equal scores (so `preference_alignment` measures a pointwise
    judge on a pair sample). A document without a score gets ``missing``; None leaves its pairs out."""
    out = []
    for qid, a, b in pairs:
        docs = scores.get(qid, {})
        sa, sb = docs.get(a, missing), docs.get(b, missing)
        if sa is None or sb is None:
            continue
        out.append((qid, a, b, 1 if sa > sb else (2 if sb > sa else 0)))
    return out


def outcome_alignment(outcomes: Iterable[tuple[str, str]]) -> AlignmentResult:
    """Alignment from already classified pairs ``(comparison, outcome)`` (e.g. the published
    prompt-sensitivity files, or `classify_preferences`), pooled; no per-topic counts."""
    totals = {c: [0, 0, 0] for c in COMPARISONS}
    slots = {outcome: i for i, outcome in enumerate(OUTCOMES)}
    for comp, outcome in outcomes:
        totals[comp][slots[outcome]] += 1
    return AlignmentResult({c: Counts(*v) for c, v in totals.items()})


def _alignment(labels: JudgeLabels) -> Outcome:
    if labels.preferences is not None:
        result = preference_alignment(labels.qrels, labels.preferences, unacceptable=labels.unacceptable)
    else:
        result = human_alignment(
            labels.qrels, labels.scores, unacceptable=labels.unacceptable, missing=labels.missing
        )
    result.average = labels.alignment_average
    result.__post_init__()
    return Outcome(result, {"alignment": result.as_dict()}, result.row())


ALIGNMENT = JudgmentMeasure(
    name="alignment",
    description="agree/tie/disagree with the human Best/Acceptable/Unacceptable categories, per comparison and macro",
    applies_to=frozenset({"pointwise", "preferences"}),
    columns=(
        "missing",
        *(f"{comp}_{part}" for comp in COMPARISONS for part in ("agree", "tie", "disagree", "pairs")),
        "macro_agree",
        "macro_tie",
        "macro_disagree",
    ),
    empty={"alignment": {}},
    compute=_alignment,
)
