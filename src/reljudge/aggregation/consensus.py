"""Consensus of several judgment sets of the same items (an ensemble of prompts, models or repeated
samples): one score per (qid, docid) by a rule, with the per-item disagreement.

Rules (`RULES`):

- ``majority``: the label most members gave. **Tie rule**: among the labels tied for most votes,
  the lowest (the conservative choice: a document the members split on is not promoted);
- ``mean``, ``min``, ``max``: of the members' scores (``mean`` of expected grades is the
  "expected-mean" of an ensemble whose members carry expected relevance).

Every item a member scores takes part; a member that does not score an item casts no vote on it.
Per item: ``n`` (members that scored it) and ``agreement``, the share of them that gave the
majority label (1.0 when all agree; for float scores, the share at the rounded majority).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["RULES", "Consensus", "combine_scores", "majority"]

Scores = Mapping[str, Mapping[str, float]]
RULES: tuple[str, ...] = ("majority", "mean", "min", "max")


@dataclass
class Consensus:
    """The consensus scores, and per item the members' values, ``n`` and ``agreement``."""

    rule: str
    members: list[str]
    scores: dict[str, dict[str, float]]
    #: (qid, docid) -> the members' values in member order (None where a member has none)
    values: dict[tuple[str, str], list[float | None]] = field(default_factory=dict)
    agreement: dict[tuple[str, str], float] = field(default_factory=dict)

    @property
    def mean_agreement(self) -> float:
        return sum(self.agreement.values()) / len(self.agreement) if self.agreement else float("nan")

    @property
    def unanimous(self) -> int:
        return sum(1 for a in self.agreement.values() if a == 1.0)


def majority(values: Sequence[float]) -> tuple[float, float]:
    """(majority label, share of the values that gave it); ties go to the lowest tied label."""
    counts = Counter(values)
    top = max(counts.values())
    label = min(v for v, c in counts.items() if c == top)
    return label, top / len(values)


def combine_scores(members: Mapping[str, Scores], rule: str = "majority") -> Consensus:
    """The consensus of ``members`` (name -> ``{qid: {docid: score}}``) by ``rule``."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    if len(members) < 2:
        raise ValueError("a consensus needs at least two members")
    names = list(members)
    items: dict[tuple[str, str], list[float | None]] = {}
    for i, name in enumerate(names):
        for qid, docs in members[name].items():
            for docid, score in docs.items():
                row = items.setdefault((qid, docid), [None] * len(names))
                row[i] = float(score)
    out = Consensus(rule, names, {}, items)
    for (qid, docid), row in items.items():
        present = [v for v in row if v is not None]
        label, share = majority([round(v) if rule != "majority" else v for v in present])
        if rule == "majority":
            value = label
        elif rule == "mean":
            value = sum(present) / len(present)
        elif rule == "min":
            value = min(present)
        else:
            value = max(present)
        out.scores.setdefault(qid, {})[docid] = value
        out.agreement[(qid, docid)] = share
    return out
