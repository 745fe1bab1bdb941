"""Preference outcomes of judged pairs, keyed by unordered pair, and the human-grade judge.

An outcome is the winning docid, or `TIE` (the two orders disagreed, or equal grades). A pair
whose judgment failed is kept apart (`Preferences.failed`): it is neither a win nor a tie.
Pure: no file is read here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

TIE = ""
PairKey = tuple[str, str, str]


def pair_key(qid: str, a: str, b: str) -> PairKey:
    """The orientation-free key of a pair: ``(qid, smaller docid, larger docid)``."""
    if a == b:
        raise ValueError(f"a pair compares {a!r} with itself (topic {qid})")
    return (qid, a, b) if a < b else (qid, b, a)


@dataclass
class Preferences:
    """Judged pairs: ``outcomes[key]`` is the winner or `TIE`; ``failed`` the pairs judged without
    a label; ``unjudged`` the pairs a source could not judge (a passage without a grade), with why."""

    outcomes: dict[PairKey, str] = field(default_factory=dict)
    failed: set[PairKey] = field(default_factory=set)
    unjudged: dict[PairKey, str] = field(default_factory=dict)

    def outcome(self, qid: str, a: str, b: str) -> str | None:
        """The winner, `TIE`, or None when the pair has no outcome (failed or not judged)."""
        return self.outcomes.get(pair_key(qid, a, b))

    def add(self, qid: str, a: str, b: str, winner: str | None) -> None:
        """Record a pair's outcome: ``winner`` one of a, b, `TIE`, or None for a failure."""
        key = pair_key(qid, a, b)
        if winner is None:
            if key not in self.outcomes:
                self.failed.add(key)
            return
        if winner not in (a, b, TIE):
            raise ValueError(f"winner {winner!r} is neither {a!r} nor {b!r} nor a tie")
        self.failed.discard(key)
        self.outcomes[key] = winner

    def counts(self) -> dict[str, int]:
        ties = sum(1 for w in self.outcomes.values() if w == TIE)
        return {
            "pairs_with_outcome": len(self.outcomes),
            "decided": len(self.outcomes) - ties,
            "ties": ties,
            "failed": len(self.failed),
            "unjudged": len(self.unjudged),
        }


def human_preferences(
    pairs: Iterable[tuple[str, str, str]], qrels: Mapping[str, Mapping[str, float]]
) -> Preferences:
    """The human grades as the judge: the passage with the higher qrels grade wins, equal grades
    tie. A pair with a passage that has no grade for its topic is not judged (``unjudged``)."""
    prefs = Preferences()
    for qid, a, b in pairs:
        grades = qrels.get(qid, {})
        missing = [d for d in (a, b) if d not in grades]
        if missing:
            prefs.unjudged[pair_key(qid, a, b)] = f"no qrels grade for {', '.join(missing)}"
            continue
        ga, gb = grades[a], grades[b]
        prefs.add(qid, a, b, a if ga > gb else b if gb > ga else TIE)
    return prefs


def agreement(judge: Preferences, reference: Preferences) -> dict[str, float | int]:
    """How a judge's outcomes compare with a reference's (e.g. the human grades) on the pairs both
    decided or tied: same winner, opposite winner, both tie, only the judge ties, only the
    reference ties; ``agreement`` = (same + both tie) / pairs."""
    counts = dict.fromkeys(("pairs", "same", "opposite", "both_tie", "judge_tie", "reference_tie"), 0)
    for key, w in judge.outcomes.items():
        r = reference.outcomes.get(key)
        if r is None:
            continue
        counts["pairs"] += 1
        if w == TIE and r == TIE:
            counts["both_tie"] += 1
        elif w == TIE:
            counts["judge_tie"] += 1
        elif r == TIE:
            counts["reference_tie"] += 1
        else:
            counts["same" if w == r else "opposite"] += 1
    n = counts["pairs"]
    decided = counts["same"] + counts["opposite"]
    return {
        **counts,
        "agreement": (counts["same"] + counts["both_tie"]) / n if n else float("nan"),
        "agreement_decided": counts["same"] / decided if decided else float("nan"),
    }
