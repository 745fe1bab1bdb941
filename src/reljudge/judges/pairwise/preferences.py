"""Pairwise preferences: combining the two presentation orders, and counting wins.

Position-bias control (Arabzadeh & Clarke, SIGIR 2025, ``Pref/judge.py``): each pair is
judged twice, once in each order. `combine_orders` keeps a preference only when both orders
agree; disagreement is a tie.

Document scores are Borda-like win counts (``Pref/reformat.py``): a passage's score is the
number of comparisons it won. Ties are handled by `count_wins`'s ``ties`` option:

- ``"none"`` (default): a tie is nobody's win;
- ``"half"``: each side of a tie gets 0.5;
- ``"shorter"``: the shorter passage gets the win (passage lengths required). This is what
  the published ``preferences`` files do: ``judge.py`` logs a tie as ``topic shorter longer``
  and ``reformat.py`` counts the first document of every line as the winner, so a tie is a
  full win for the shorter passage (for equal lengths, for ``docid_b``).

Every document that took part in an ``ok`` comparison gets a score, 0 included, and the
documents that never won are listed (`PreferenceScores.never_won`); the published files omit
them (`PreferenceScores.nonzero` gives that view). Failed comparisons give no win and are
counted in `Exclusions`; a document whose every comparison failed gets no score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from reljudge.aggregation.exclusions import Exclusions, collect
from reljudge.aggregation.score_sets import ScoreMeaning
from reljudge.records import Judgment

PREFER_A, PREFER_B, TIE = 1, 2, 0
#: what win counts mean: a count that grows with the pool (0-42 on the published DL21 file), not a
#: grade, so never gains; a document is relevant when it won at least one comparison
WIN_COUNTS = ScoreMeaning(
    "win counts: comparisons won in the pool, not a grade", gains=False, cut=0, strict=True
)
TiePolicy = Literal["none", "half", "shorter"]
TIE_POLICIES: tuple[str, ...] = ("none", "half", "shorter")
OneSided = Literal["fail", "use-other"]


def _check_label(name: str, label: int | float | None) -> None:
    if label is not None and label not in (PREFER_A, PREFER_B, TIE):
        raise ValueError(f"{name} must be 1, 2, 0 (tie) or None (no label), got {label!r}")


def combine_orders(
    ab_label: int | float | None,
    ba_label: int | float | None,
    *,
    one_sided: OneSided = "fail",
) -> int | None:
    """Combine the judgments of a pair shown as (a, b) and as (b, a).

    Labels are relative to the order shown: 1 = the first passage, 2 = the second, 0 = tie,
    None = no label (the call failed or the answer could not be parsed). The result is
    relative to (a, b): 1 = a preferred, 2 = b preferred, 0 = tie.

    - both orders prefer the same passage -> that passage;
    - any disagreement (including one order saying tie) -> 0;
    - either order unlabelled -> None (the combined record is not ``ok``). With
      ``one_sided="use-other"`` the labelled order decides alone, as ``judge.py``'s ``pref()``
      does.
    """
    _check_label("ab_label", ab_label)
    _check_label("ba_label", ba_label)
    if one_sided not in ("fail", "use-other"):
        raise ValueError(f"one_sided must be 'fail' or 'use-other', not {one_sided!r}")
    if ab_label is None and ba_label is None:
        return None
    if ab_label is None or ba_label is None:
        if one_sided == "fail":
            return None
        if ab_label is not None:
            return int(ab_label)
        return {PREFER_A: PREFER_B, PREFER_B: PREFER_A, TIE: TIE}[int(ba_label)]  # type: ignore[arg-type]
    if ab_label == PREFER_A and ba_label == PREFER_B:
        return PREFER_A
    if ab_label == PREFER_B and ba_label == PREFER_A:
        return PREFER_B
    return TIE


@dataclass
class PreferenceScores:
    """Win counts ``{qid: {docid: wins}}`` (zeros included) and what was left out."""

    scores: dict[str, dict[str, float]]
    never_won: dict[str, list[str]] = field(default_factory=dict)
    exclusions: Exclusions = field(default_factory=Exclusions)

    def nonzero(self) -> dict[str, dict[str, float]]:
        """The published files' view: documents that never won are left out."""
        return {q: {d: s for d, s in docs.items() if s > 0} for q, docs in self.scores.items()}


def _pair_key(j: Judgment) -> tuple[str, str, str]:
    if j.docid is None or j.docid_b is None:
        raise ValueError(f"a pairwise record needs docid and docid_b (topic {j.qid})")
    if j.docid == j.docid_b:
        raise ValueError(f"a document compared with itself: {j.qid} {j.docid}")
    a, b = sorted((j.docid, j.docid_b))
    return (j.qid, a, b)


def _outcome(j: Judgment) -> str | None:
    """The winning docid, or None for a tie (orientation-free, to compare duplicates)."""
    _check_label("label", j.label)
    if j.label == PREFER_A:
        return j.docid
    if j.label == PREFER_B:
        return j.docid_b
    return None


def count_wins(
    judgments: Iterable[Judgment],
    *,
    ties: TiePolicy = "none",
    lengths: Mapping[str, int] | None = None,
) -> PreferenceScores:
    """Borda-like win counts from combined pair records (one per unordered pair).

    `lengths` (docid -> passage length in characters) is needed for ``ties="shorter"``; a tie
    whose passages have no length raises ValueError. The same unordered pair twice with the
    same outcome counts once; with different outcomes it raises ValueError.
    """
    if ties not in TIE_POLICIES:
        raise ValueError(f"ties must be one of {', '.join(TIE_POLICIES)}, not {ties!r}")
    exclusions = Exclusions(policy="exclude")
    ok, failed = collect(judgments, _pair_key, exclusions, value=_outcome)

    scores: dict[str, dict[str, float]] = {}
    for (qid, _, _), j in ok.items():
        docs = scores.setdefault(qid, {})
        a, b = j.docid, j.docid_b
        assert a is not None and b is not None
        docs.setdefault(a, 0.0)
        docs.setdefault(b, 0.0)
        winner = _outcome(j)
        if winner is not None:
            docs[winner] += 1.0
        elif ties == "half":
            docs[a] += 0.5
            docs[b] += 0.5
        elif ties == "shorter":
            if lengths is None or a not in lengths or b not in lengths:
                raise ValueError(
                    f"ties='shorter' needs the passage lengths of {a} and {b} (topic {qid}); "
                    "pass lengths or choose ties='none' or 'half'"
                )
            docs[a if lengths[a] < lengths[b] else b] += 1.0
    unscored: dict[tuple[str, str], None] = {}
    for qid, a, b in failed:
        for docid in (a, b):
            if docid not in scores.get(qid, {}):
                unscored[(qid, docid)] = None
    exclusions.unscored.extend((qid, docid, "every comparison failed") for qid, docid in unscored)
    never_won = {q: [d for d, s in docs.items() if s == 0] for q, docs in scores.items()}
    never_won = {q: ds for q, ds in never_won.items() if ds}
    return PreferenceScores(scores=scores, never_won=never_won, exclusions=exclusions)
