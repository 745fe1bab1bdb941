"""Nugget records -> score sets: the six TREC RAG 2024 scores of a run's assignments
(``nuggets-all``, ``nuggets-all-strict``, ``nuggets-vital``, ``nuggets-vital-strict``,
``nuggets-weighted``, ``nuggets-weighted-strict``), against the scored nugget records.

``top_k`` chooses the nuggets passages were assessed against: ``"recorded"`` (default) takes the
nugget records' ``extra["selected"]`` flags (the top 20 when none is recorded), an int or None
re-selects (`select_nuggets`); any other scored nugget with assignments is added.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from reljudge.aggregation.exclusions import Exclusions, FailurePolicy
from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning
from reljudge.judges.nuggets.scores import (
    DEFAULT_TOP_K,
    NUGGET_SCORES,
    EmptyClass,
    Nugget,
    Weighting,
    nugget_scores,
    select_nuggets,
)

NUGGET_METHOD = "nugget"
CREATION_METHOD = "nugget-creation"
ASSIGN_METHOD = "nugget-assignment"
NUGGET_SETS: tuple[str, ...] = tuple(f"nuggets-{score}" for score in NUGGET_SCORES)
RECORDED: Final = "recorded"


def _meaning(score: str) -> ScoreMeaning:
    """What a nugget score means: the support of the topic's nuggets (all, vital, or weighted:
    vital 1, okay 0.5; strict: full support only), a share, not a grade; relevant when the
    passage supports some nugget. The weighted scores of the published files can exceed 1 (their
    normalisation, ``weighted="thesis"``), so only the shares of nuggets are declared on 0-1."""
    kind, _, strict = score.partition("-")
    supported = "fully supported" if strict else "supported"
    what = {
        "all": f"share of all nuggets {supported}",
        "vital": f"share of vital nuggets {supported}",
        "weighted": f"weighted share of nuggets {supported} (vital 1, okay 0.5)",
    }[kind]
    return ScoreMeaning(what, gains=False, scale=None if kind == "weighted" else (0, 1), cut=0, strict=True)


#: what each nugget score means (`_meaning`), by set name
NUGGET_MEANINGS: dict[str, ScoreMeaning] = {f"nuggets-{score}": _meaning(score) for score in NUGGET_SCORES}
TopK = int | None | Literal["recorded"]


def _extra(record: Any) -> Mapping[str, Any]:
    extra = getattr(record, "extra", None)
    return extra if isinstance(extra, Mapping) else {}


def nugget_sets(
    records: Sequence[Any],
    *,
    top_k: TopK = RECORDED,
    empty_class: EmptyClass = "undefined",
    weighted: Weighting = "trec",
    on_failure: FailurePolicy = "exclude",
) -> dict[str, AggregatedScores]:
    """The nugget score sets of ``records`` (assignments and scored nuggets; others are ignored).
    A passage not assessed against every nugget is listed in each set's ``incomplete``."""
    if top_k != RECORDED and top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a positive integer, None or 'recorded', got {top_k!r}")
    assignments = [r for r in records if r.method == ASSIGN_METHOD and r.docid is not None]
    nuggets = [r for r in records if r.method == NUGGET_METHOD and r.docid is None]
    if not assignments:
        return {}
    sets = _nugget_sets(
        assignments, nuggets, top_k, empty_class=empty_class, weighted=weighted, on_failure=on_failure
    )
    for name, result in sets.items():
        result.family = "nuggets"
        result.primary = name == "nuggets-all"
        result.incomplete = sorted({(m[0], m[1]) for m in result.exclusions.missing})
    return sets


def _assessed_nuggets(records: list[Any], top_k: TopK, assigned: set[str]) -> list[Nugget]:
    """The scored nuggets passages were assessed against (see `score_sets`)."""
    ranked: list[tuple[str, int, Nugget, Any]] = []
    seen: set[str] = set()
    for r in records:
        extra = _extra(r)
        text, importance = extra.get("text"), extra.get("importance")
        if r.status != "ok" or not r.item_id or r.item_id in seen:
            continue
        if isinstance(text, str) and importance in ("vital", "okay"):
            seen.add(r.item_id)
            nugget = Nugget(id=r.item_id, qid=r.qid, text=text, importance=importance)
            ranked.append((r.qid, int(extra.get("rank", 0)), nugget, extra.get("selected")))
    ranked.sort(key=lambda x: (x[0], x[1]))
    bank = [n for _, _, n, _ in ranked]
    if top_k == RECORDED and any(flag is not None for *_, flag in ranked):
        selected = [n for _, _, n, flag in ranked if flag]
    else:
        selected = select_nuggets(bank, DEFAULT_TOP_K if top_k == RECORDED else top_k)
    chosen = {n.id for n in selected}
    return selected + [n for n in bank if n.id in assigned and n.id not in chosen]


def _nugget_sets(
    assignments: list[Any],
    records: list[Any],
    top_k: TopK,
    *,
    empty_class: EmptyClass,
    weighted: Weighting,
    on_failure: FailurePolicy = "exclude",
) -> dict[str, AggregatedScores]:
    nuggets = _assessed_nuggets(records, top_k, {r.item_id for r in assignments})
    ids = {n.id for n in nuggets}
    kept = [r for r in assignments if r.item_id in ids]
    details: dict[str, Any] = {"nuggets": len(nuggets)}
    if len(kept) < len(assignments):
        details["assignments_without_scored_nugget"] = len(assignments) - len(kept)
    result = nugget_scores(kept, nuggets, empty_class=empty_class, weighted=weighted, on_failure=on_failure)
    out: dict[str, AggregatedScores] = {}
    for score in NUGGET_SCORES:
        out[f"nuggets-{score}"] = AggregatedScores(
            method=f"nuggets-{score}",
            scores=result.qrels(score),
            exclusions=_for_score(result.exclusions, score),
            details={"score": score, **details},
            meaning=NUGGET_MEANINGS[f"nuggets-{score}"],
        )
    return out


def _for_score(exclusions: Exclusions, score: str) -> Exclusions:
    """A copy for one nugget score: the "no vital nugget" entries concern the vital scores only."""
    own = copy.deepcopy(exclusions)
    if not score.startswith("vital"):
        own.unscored = [u for u in own.unscored if not u[2].startswith("vital:")]
    return own


def recorded_nuggets(existing: Mapping[Any, Any]) -> dict[str, list[Nugget]]:
    """The scored nuggets of an earlier run of a job (its records by key, e.g.
    ``JudgeContext.existing``), per topic, in creation order."""
    found: dict[str, list[tuple[int, Nugget]]] = {}
    # filter by the key's method first: ``existing`` may read records lazily
    for record_key in [k for k in existing if k[0] == NUGGET_METHOD]:
        record = existing[record_key]
        if record.method != NUGGET_METHOD or not record.item_id or record.status == "skipped":
            continue
        text = record.extra.get("text")
        if not isinstance(text, str):
            continue
        importance = record.extra.get("importance") if record.ok else None
        nugget = Nugget(id=record.item_id, qid=record.qid, text=text, importance=importance)
        found.setdefault(record.qid, []).append((int(record.extra.get("rank", 0)), nugget))
    return {qid: [n for _, n in sorted(items, key=lambda x: x[0])] for qid, items in found.items()}
