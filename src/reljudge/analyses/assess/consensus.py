"""From several assessors' labels to one exported label per item, and their agreement.

The rule (`RULE`): the label most assessors gave; a tie between labels goes to the lower label (the
more cautious grade). An item nobody labelled (or whose labels were all withdrawn) is not exported.
Agreement: Cohen's κ (unweighted and linearly weighted over the task's scale) for every pair of
assessors on the items both labelled, Krippendorff's α (nominal, ordinal, interval) over every
item at least two labelled, and each assessor's (and the exported label's) κ with the LLM label.
Every figure is unweighted over the task's items (the inclusion probabilities of the selection are
not used): it describes the selected items, and the report says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from reljudge.metrics.agreement import AlphaLevel, cohen_kappa, krippendorff_alpha

LEVELS: tuple[AlphaLevel, ...] = ("nominal", "ordinal", "interval")
RULE = "majority of the assessors' labels; a tie between labels goes to the lower label"

#: {assessor: {item: label}} -- each assessor's current labels (withdrawn ones left out)
Labels = Mapping[str, Mapping[str, int]]


def exported_label(labels: Sequence[int]) -> int:
    """`RULE`: the most frequent label, the lowest of those tied for most."""
    if not labels:
        raise ValueError("no labels")
    counts = Counter(labels)
    top = max(counts.values())
    return min(label for label, n in counts.items() if n == top)


@dataclass(frozen=True)
class Row:
    """One exported item: each assessor's label and the label exported by `RULE`."""

    item: str
    votes: dict[str, int]
    label: int


def combine(items: Sequence[str], labels: Labels) -> list[Row]:
    """The exported rows, in the order of ``items`` (the task's), for items someone labelled."""
    rows = []
    for item in items:
        votes = {name: own[item] for name, own in sorted(labels.items()) if item in own}
        if votes:
            rows.append(Row(item, votes, exported_label(list(votes.values()))))
    return rows


def _kappas(a: Sequence[int], b: Sequence[int], scale: Sequence[int]) -> dict[str, Any]:
    return {
        "items": len(a),
        "agree": sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else float("nan"),
        "kappa": cohen_kappa(a, b, labels=scale),
        "kappa_linear": cohen_kappa(a, b, weights="linear", labels=scale),
    }


def agreement(
    items: Sequence[str], labels: Labels, llm: Mapping[str, int | None], scale: Sequence[int]
) -> dict[str, Any]:
    """Agreement between the assessors and with the LLM (see the module docstring)."""
    names = sorted(labels)
    pairs = []
    for a, b in combinations(names, 2):
        shared = [i for i in items if i in labels[a] and i in labels[b]]
        pairs.append(
            {"a": a, "b": b} | _kappas([labels[a][i] for i in shared], [labels[b][i] for i in shared], scale)
        )
    units = [i for i in items if sum(i in labels[n] for n in names) >= 2]
    alpha: dict[str, Any] = {"items": len(units), "assessors": len(names)}
    if units:
        nan = float("nan")
        matrix = [[float(labels[n].get(i, nan)) for i in units] for n in names]
        for level in LEVELS:
            alpha[level] = krippendorff_alpha(matrix, level=level)
    with_llm = {}
    rows = combine(items, labels)
    exported = {r.item: r.label for r in rows}
    for name, own in [*((n, labels[n]) for n in names), ("exported", exported)]:
        shared = [i for i in items if i in own and llm.get(i) is not None]
        with_llm[name] = _kappas([own[i] for i in shared], [llm[i] for i in shared], scale)  # type: ignore[misc]
    return {"rule": RULE, "pairs": pairs, "alpha": alpha, "with_llm": with_llm}


def _num(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


def summary_lines(counts: Mapping[str, int], result: Mapping[str, Any]) -> list[str]:
    """The export's report: what was exported, by which rule, and the agreement figures."""
    lines = [
        f"task items: {counts['items']}; labelled by at least one assessor: {counts['labelled']}, "
        f"by two or more: {counts['multiple']}; not labelled (not exported): {counts['items'] - counts['labelled']}",
        f"exported label: {result['rule']}",
    ]
    for p in result["pairs"]:
        lines.append(
            f"agreement {p['a']} vs {p['b']} on {p['items']} items: {_pct(p['agree'])} same label, "
            f"Cohen's kappa {_num(p['kappa'])}, linear-weighted {_num(p['kappa_linear'])}"
        )
    a = result["alpha"]
    if a["items"]:
        lines.append(
            f"Krippendorff's alpha over {a['items']} items labelled by 2+ of {a['assessors']} assessors: "
            f"nominal {_num(a['nominal'])}, ordinal {_num(a['ordinal'])}, interval {_num(a['interval'])}"
        )
    for name, k in result["with_llm"].items():
        if k["items"]:
            lines.append(
                f"{name} vs the LLM label on {k['items']} items: {_pct(k['agree'])} same label, "
                f"Cohen's kappa {_num(k['kappa'])}, linear-weighted {_num(k['kappa_linear'])}"
            )
    if any(k["items"] for k in result["with_llm"].values()):
        lines.append(
            "(agreement figures are unweighted, over the task's items: when the selection favoured some "
            "items (uncertainty, influence or unequal strata) they describe the selected items, not the run)"
        )
    return lines


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f} %"
