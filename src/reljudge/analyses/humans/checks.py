"""How the people's checks compare with the LLM's labels, by stratum (pure): what ``judge
report --assessments`` shows beside the LLM labels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_DISAGREEMENTS", "agreement_rows", "assessor_agreement", "disagreement_rows"]

#: disagreements listed at most (the rest are counted)
MAX_DISAGREEMENTS = 500


def _verdicts(assessments: Sequence[Any]) -> dict[str, list[Any]]:
    by_item: dict[str, list[Any]] = {}
    for a in assessments:
        by_item.setdefault(a.item, []).append(a)
    return by_item


def agreement_rows(
    assessments: Sequence[Any], llm: Mapping[str, float | None], strata: Mapping[str, str], threshold: float
) -> list[list[str]]:
    """Per stratum (then all): items checked, exact agreement, agreement on relevant (>=
    ``threshold``) or not, how often the LLM graded higher / lower, median seconds. An item
    checked by several people counts once per person."""
    groups: dict[str, list[tuple[float, float, float | None]]] = {}
    for a in assessments:
        label = llm.get(a.item)
        if label is None:
            continue
        row = (float(label), a.label, a.seconds)
        groups.setdefault(strata.get(a.item, "-"), []).append(row)
        groups.setdefault("all", []).append(row)
    out = []
    for name in [*sorted(g for g in groups if g != "all"), "all"]:
        rows = groups.get(name)
        if not rows:
            continue
        n = len(rows)
        exact = sum(y == h for y, h, _ in rows)
        binary = sum((y >= threshold) == (h >= threshold) for y, h, _ in rows)
        higher = sum(y > h for y, h, _ in rows)
        lower = sum(y < h for y, h, _ in rows)
        secs = sorted(s for _, _, s in rows if s is not None)
        median = f"{secs[len(secs) // 2]:.1f}" if secs else "-"
        out.append([name, str(n), f"{exact / n:.1%}", f"{binary / n:.1%}", str(higher), str(lower), median])
    return out


def disagreement_rows(
    assessments: Sequence[Any], llm: Mapping[str, float | None], strata: Mapping[str, str]
) -> tuple[list[list[str]], int]:
    """The items where a person's label differs from the LLM's (at most `MAX_DISAGREEMENTS`,
    sorted by stratum and item) and how many there are."""
    rows = []
    for item, found in sorted(_verdicts(assessments).items(), key=lambda kv: (strata.get(kv[0], "-"), kv[0])):
        label = llm.get(item)
        if label is None or all(a.label == label for a in found):
            continue
        qid, docid = item.split("\t", 1)
        people = ", ".join(f"{a.assessor}: {a.label:g}" for a in found)
        rows.append([strata.get(item, "-"), qid, docid, f"{float(label):g}", people])
    return rows[:MAX_DISAGREEMENTS], len(rows)


def assessor_agreement(assessments: Sequence[Any]) -> tuple[int, float] | None:
    """(items with two or more people, share of those items on which all of them agree); None
    when no item was checked twice."""
    shared = [found for found in _verdicts(assessments).values() if len({a.assessor for a in found}) > 1]
    if not shared:
        return None
    agree = sum(len({a.label for a in found}) == 1 for found in shared)
    return len(shared), agree / len(shared)
