"""Scoring records by their shape, for methods that leave scoring to it: a ``docid`` alone is a
pointwise label (`label_scores`), ``docid`` and ``docid_b`` a comparison (win counts,
`pairwise_sets`). The default of `reljudge.judges.base.Judge.score_records`, and how
`reljudge.judges.scoring` scores records no judge declares."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reljudge.aggregation.exclusions import Exclusions, check_policy, single_method
from reljudge.aggregation.qrels import AggregatedScores, label_scores
from reljudge.judges.pairwise.preferences import _pair_key, count_wins

__all__ = ["EXPECTED_SUFFIX", "expected_set", "pairwise_sets", "shape_scores", "shape_sets"]


def shape_sets(
    records: Iterable[Any],
    *,
    on_failure: str = "exclude",
    ties: str = "none",
    lengths: Mapping[str, int] | None = None,
    **_: Any,
) -> dict[str, AggregatedScores]:
    """Score sets of label records by their shape, one per record method: pointwise labels
    (``docid``), or pairwise win counts (``docid`` and ``docid_b``; `ties` and `lengths` go to
    `count_wins`, and the ``ok`` comparisons are kept in ``details["preferences"]``). Records
    without a passage are skipped."""
    check_policy(on_failure)
    groups: dict[str, tuple[str, list[Any]]] = {}
    for r in records:
        if r.docid is None:
            continue  # stage or topic-level records
        if r.docid_b is not None:
            kind = "pairwise"
        elif r.item_id is None:
            kind = "pointwise"
        else:
            raise ValueError(
                f"records of method {r.method!r} grade items (item_id) of passages, and no judge "
                "declares that method: install the judge that made them to score them"
            )
        first_kind, grouped = groups.setdefault(r.method, (kind, []))
        if first_kind != kind:
            raise ValueError(f"records of method {r.method!r} mix {first_kind} and {kind} judgments")
        grouped.append(r)
    out: dict[str, AggregatedScores] = {}
    for method, (kind, group) in groups.items():
        if kind == "pointwise":
            result = label_scores(group, on_failure=on_failure)  # type: ignore[arg-type]
        else:
            result = pairwise_sets(group, on_failure=on_failure, ties=ties, lengths=lengths)
        result.family = method
        out[method] = result
        if kind == "pointwise":
            found = expected_set(group, result)
            if found is not None:
                out[found.method] = found
    return out


#: the suffix of the score set of expected grades (`expected_set`)
EXPECTED_SUFFIX = "-expected"


def expected_set(group: Sequence[Any], labels: AggregatedScores) -> AggregatedScores | None:
    """The ``<method>-expected`` set of one pointwise method: each document's expected grade
    from the distribution at its label position (``extra["expected"]``,
    `reljudge.judges.expected`); a labelled record without one keeps its label (the argmax), and
    ``details`` counts them (``argmax``), with the judge's ``scale`` and the mean ``outside``
    mass. None when no record has a distribution."""
    scores = {q: dict(d) for q, d in labels.scores.items()}
    found = argmax = 0
    outside = 0.0
    scale: list[int] | None = None
    for r in group:
        extra = getattr(r, "extra", None)  # label views (a run's own end) carry no extra
        info = extra.get("expected") if r.status == "ok" and isinstance(extra, dict) else None
        if r.status != "ok" or r.docid not in scores.get(r.qid, {}):
            continue
        if isinstance(info, dict) and isinstance(info.get("expected"), (int, float)):
            scores[r.qid][r.docid] = float(info["expected"])
            outside += float(info.get("outside") or 0.0)
            scale = scale or list(info.get("scale") or [])
            found += 1
        else:
            argmax += 1
    if not found:
        return None
    method = labels.method + EXPECTED_SUFFIX
    details = {
        "scale": [min(scale), max(scale)] if scale else None,
        "distributions": found,
        "argmax": argmax,
        "mean_outside": outside / found,
    }
    return AggregatedScores(method, scores, labels.exclusions, details, family=labels.family)


def pairwise_sets(
    group: Sequence[Any],
    *,
    on_failure: str = "exclude",
    ties: Any = "none",
    lengths: Mapping[str, int] | None = None,
) -> AggregatedScores:
    """The win counts of one record method's comparisons (`count_wins`), with the ``ok``
    comparisons in ``details["preferences"]`` (one per unordered pair)."""
    if on_failure != "exclude":
        raise ValueError("a failed comparison gives no win; on_failure must be 'exclude' for pairwise")
    prefs = count_wins(group, ties=ties, lengths=lengths)
    seen: set[tuple[str, str, str]] = set()
    comparisons: list[tuple[str, str, str, int]] = []
    for r in group:
        if r.status != "ok" or r.label is None:
            continue
        k = _pair_key(r)
        if k not in seen:
            seen.add(k)
            comparisons.append((r.qid, r.docid, r.docid_b, int(r.label)))
    method = group[0].method if group else "pairwise"
    return AggregatedScores(
        method=method,
        scores=prefs.scores,
        exclusions=prefs.exclusions,
        details={"never_won": prefs.never_won, "ties": ties, "preferences": comparisons},
    )


def shape_scores(
    name: str, records: Sequence[Any], *, pairwise: bool = False, **options: Any
) -> AggregatedScores:
    """The scores of one record method ``name`` by its records' shape: win counts when
    ``pairwise`` or when its records are pairs, labels otherwise (a record that is not a
    pointwise label is then a ValueError). ``options``: ``on_failure``, ``ties``, ``lengths``."""
    on_failure = options.get("on_failure", "exclude")
    recorded = single_method(records)
    if recorded is not None and name == recorded + EXPECTED_SUFFIX:
        sets = shape_sets(records, on_failure=on_failure)
        if name not in sets:
            raise ValueError(f"no {name!r} scores: the records hold no log-probability distribution")
        return sets[name]
    pairwise = pairwise or (recorded == name and any(r.docid_b for r in records))
    if pairwise and on_failure != "exclude":
        raise ValueError("a failed comparison gives no win; on_failure must be 'exclude' for pairwise")
    if not pairwise:
        if options.get("score") is not None:
            raise ValueError(f"method {name!r} is pointwise and takes no score option")
        for r in records:
            if r.docid is None or r.docid_b is not None or r.item_id is not None:
                raise ValueError(
                    f"not a pointwise record (topic {r.qid}: docid={r.docid!r}, docid_b={r.docid_b!r}, "
                    f"item_id={r.item_id!r}); pass the matching method (pairwise, exam, nuggets)"
                )
    check_policy(on_failure)
    found = shape_sets(
        records, **{k: v for k, v in options.items() if k in ("on_failure", "ties", "lengths")}
    )
    if found:
        (result,) = found.values()
        result.details.pop("preferences", None)
    elif pairwise:  # no records
        result = AggregatedScores(
            name, {}, Exclusions(), {"never_won": {}, "ties": options.get("ties", "none")}
        )
    else:
        result = AggregatedScores(name, {}, Exclusions(policy=on_failure))
    result.method = name
    return result
