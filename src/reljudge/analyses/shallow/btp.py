""" "Better than perfect" (Arabzadeh et al.; thesis §3.1.2): is a run's top passage better than
the judged "perfect" one?

For each query the reference passage q* comes from the qrels (`reference_passages`). Category A:
the run's top passage is q*, and q* is compared with the run's second passage; category B: it
is not, and q* is compared with the run's top passage (`btp_pairs`). After judging, `tally`
counts per category the reference preferred, the other preferred, ties and failures, with shares
excluding and including ties, and the exact two-sided binomial test for category B.
`best_known` replaces q* by the run's top passage where that won (the best-known update, SH-12).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reljudge.analyses.shallow.preference_outcomes import TIE, Preferences

QrelChoice = Literal["first", "best-ranked", "top-grade"]
QREL_CHOICES: tuple[str, ...] = ("first", "best-ranked", "top-grade")


def reference_passages(
    qrels: Mapping[str, Mapping[str, float]],
    *,
    relevant: float = 1,
    choice: QrelChoice = "first",
    rankings: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, str]:
    """q* per query with at least one passage graded ``>= relevant``, by ``choice``:

    - ``first``: the first such passage in qrels (file) order;
    - ``top-grade``: the first passage at the query's highest grade;
    - ``best-ranked``: the one the run (``rankings``, best first) ranks highest; when the run
      ranks none of them, the first in qrels order.
    """
    if choice not in QREL_CHOICES:
        raise ValueError(f"choice must be one of {', '.join(QREL_CHOICES)}, not {choice!r}")
    if choice == "best-ranked" and rankings is None:
        raise ValueError("choice 'best-ranked' needs the run's rankings")
    out: dict[str, str] = {}
    for qid, docs in qrels.items():
        rel = [d for d, g in docs.items() if g >= relevant]
        if not rel:
            continue
        if choice == "top-grade":
            top = max(docs[d] for d in rel)
            out[qid] = next(d for d in rel if docs[d] == top)
        elif choice == "best-ranked":
            ranked = {d: i for i, d in enumerate((rankings or {}).get(qid, ()))}
            placed = [d for d in rel if d in ranked]
            out[qid] = min(placed, key=ranked.__getitem__) if placed else rel[0]
        else:
            out[qid] = rel[0]
    return out


@dataclass(frozen=True)
class BtpPair:
    qid: str
    category: str  # "A" (the run's top is q*) or "B"
    reference: str
    other: str


@dataclass
class BtpPairs:
    pairs: list[BtpPair]
    #: reason -> the queries left out for it
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def category_counts(self) -> dict[str, int]:
        return {c: sum(1 for p in self.pairs if p.category == c) for c in ("A", "B")}


def btp_pairs(references: Mapping[str, str], rankings: Mapping[str, Sequence[str]]) -> BtpPairs:
    """The pair of each query (A: q* vs the run's second passage; B: q* vs its top passage).

    Queries the run does not rank, and category-A queries with no second passage, are skipped
    and listed by reason."""
    out = BtpPairs(pairs=[])
    for qid, ref in references.items():
        ranked = list(rankings.get(qid, ()))
        if not ranked:
            out.skipped.setdefault("not ranked by the run", []).append(qid)
        elif ranked[0] == ref:
            if len(ranked) < 2:
                out.skipped.setdefault("category A without a second passage", []).append(qid)
            else:
                out.pairs.append(BtpPair(qid, "A", ref, ranked[1]))
        else:
            out.pairs.append(BtpPair(qid, "B", ref, ranked[0]))
    return out


def binomial_two_sided(successes: int, trials: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test p-value (scipy's `binomtest`); 1.0 for no trials."""
    if trials <= 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(successes, trials, p, alternative="two-sided").pvalue)


def share(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


@dataclass
class CategoryTally:
    queries: int = 0
    reference: int = 0
    other: int = 0
    tie: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, float | int]:
        decided = self.reference + self.other
        with_ties = decided + self.tie
        return {
            "queries": self.queries,
            "reference_preferred": self.reference,
            "other_preferred": self.other,
            "tie": self.tie,
            "failed": self.failed,
            "reference_share_excluding_ties": share(self.reference, decided),
            "other_share_excluding_ties": share(self.other, decided),
            "reference_share_including_ties": share(self.reference, with_ties),
            "other_share_including_ties": share(self.other, with_ties),
            "tie_share": share(self.tie, with_ties),
        }


def tally(pairs: Sequence[BtpPair], prefs: Preferences) -> dict[str, CategoryTally]:
    """Counts per category; a pair without an outcome (failed, unjudged, not yet judged) is
    ``failed``."""
    out = {"A": CategoryTally(), "B": CategoryTally()}
    for p in pairs:
        t = out.setdefault(p.category, CategoryTally())
        t.queries += 1
        w = prefs.outcome(p.qid, p.reference, p.other)
        if w is None:
            t.failed += 1
        elif w == TIE:
            t.tie += 1
        elif w == p.reference:
            t.reference += 1
        else:
            t.other += 1
    return out


def category_b_test(t: CategoryTally) -> dict[str, float | int]:
    """H0: P(other preferred) = 0.5 in category B, ties excluded (exact, two-sided)."""
    n = t.reference + t.other
    return {"other": t.other, "trials": n, "p_value": binomial_two_sided(t.other, n)}


def gold_accuracy(gold: Sequence[BtpPair], prefs: Preferences) -> dict[str, float | int]:
    """Gold pairs (q* vs an off-topic passage): the judge is right when q* wins."""
    right = wrong = tie = failed = 0
    for p in gold:
        w = prefs.outcome(p.qid, p.reference, p.other)
        if w is None:
            failed += 1
        elif w == TIE:
            tie += 1
        elif w == p.reference:
            right += 1
        else:
            wrong += 1
    judged = right + wrong + tie
    return {
        "gold": len(gold),
        "right": right,
        "wrong": wrong,
        "tie": tie,
        "failed": failed,
        "accuracy": share(right, judged),
    }


def best_known(
    pairs: Sequence[BtpPair], prefs: Preferences
) -> tuple[dict[str, dict[str, int]], list[tuple[BtpPair, str]]]:
    """The best-known qrels (one passage per query of ``pairs``, grade 1): q*, replaced by the
    run's top passage where that won a category-B pair (for a pairwise run: in both orders);
    and the replacements, ``(pair, new passage)`` in pair order."""
    best: dict[str, dict[str, int]] = {}
    replaced: list[tuple[BtpPair, str]] = []
    for p in pairs:
        w = prefs.outcome(p.qid, p.reference, p.other)
        new = p.other if p.category == "B" and w not in (None, TIE) and w == p.other else p.reference
        best[p.qid] = {new: 1}
        if new != p.reference:
            replaced.append((p, new))
    return best, replaced
