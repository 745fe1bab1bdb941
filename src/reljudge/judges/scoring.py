"""From judgment records to document score sets, for any mix of methods: one generic scorer that
asks the registry which method owns which records.

`score_sets` groups the records by the judging method that owns them -- the judge class declaring
their record method in its ``label_methods`` or ``stage_methods`` (EXAM, nuggets, a plugin) --
and lets that class score them (`reljudge.judges.base.Judge.score_records`). Records no judge
declares are the labels of pointwise and pairwise judges, whose record method a run may name
freely (``binary``, ``umbrela``, a sweep's ``custom-...``): they are scored by their shape
(`shape_sets`): a ``docid`` alone is a pointwise label, ``docid`` and ``docid_b`` a comparison
(win counts). Records without a passage that no judge owns are skipped; a per-item record
(``item_id`` on a passage) of a method no judge declares is an error.

Each set is named like the published files (``binary.dl19.qrels``, ``exam-graded-max...``) and
carries its `Exclusions`: a failed record is never a label, and what its values mean as its judge
declares it (`score_meaning`: gains or not, the binary cut).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reljudge.aggregation.exclusions import Exclusions, check_policy
from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning
from reljudge.judges.base import Judge
from reljudge.judges.registry import owner_of, registered
from reljudge.judges.shape_scoring import shape_scores, shape_sets

__all__ = ["judgments_to_scores", "score_meaning", "score_sets", "select_set", "shape_sets"]


def score_sets(records: Iterable[Any], **options: Any) -> dict[str, AggregatedScores]:
    """Every score set the records support, ``{name: AggregatedScores}`` (see the module doc),
    in the order their method first appears. ``options`` are scoring options (``on_failure``,
    ``ties``, ``lengths``, ``exam_scale``, ``top_k``, ...): each method takes those it knows.

    Raises ValueError for records no method can aggregate, a method whose records mix shapes,
    contradicting labels, or two sets with one name.
    """
    check_policy(options.get("on_failure", "exclude"))
    for cls in registered().values():
        cls.check_score_options(options)
    owners: dict[str, type[Judge] | None] = {}
    groups: dict[Any, list[Any]] = {}  # owner class, or None for shape-scored records
    for record in records:
        method = record.method
        if method not in owners:
            owners[method] = owner_of(method)
        owner = owners[method]
        groups.setdefault(owner if owner is not None and owner.owns(record) else None, []).append(record)
    out: dict[str, AggregatedScores] = {}
    for owner, group in groups.items():
        found = shape_sets(group, **options) if owner is None else owner.score_records(group, **options)
        for name, result in found.items():
            if name in out:
                raise ValueError(f"two score sets would be named {name!r}; rename the method of one judge")
            if result.meaning is None:
                result.meaning = score_meaning(name)
            out[name] = result
    return out


def score_meaning(set_name: str) -> ScoreMeaning | None:
    """What the values of the score set ``set_name`` mean, as the judge whose set it is declares
    it (`Judge.score_meaning`: ``umbrela`` grades, ``pairwise`` win counts, ``exam-graded-max``
    ...); None when no judge declares the name (a custom judge's labels, a file named otherwise)."""
    for cls in registered().values():
        found = cls.score_meaning(set_name)
        if found is not None:
            return found
    return None


def select_set(
    sets: Mapping[str, AggregatedScores], *, name: str | None = None, method: str | None = None
) -> str:
    """The name of one set of `score_sets`: ``name`` when given; else the primary set of
    ``method`` (a judging method such as ``exam``, a record method, or a set name), or of the
    only method the sets come from: for EXAM the graded-max or binary score, for nuggets
    ``nuggets-all``, the labels or win counts for any other method.

    Raises ValueError for an unknown name or method, or several methods and neither given.
    """
    available = ", ".join(sets) or "none"
    if name is not None:
        if name not in sets:
            raise ValueError(f"no score set {name!r} in the judgments (they give: {available})")
        return name
    if method is not None and method in sets:
        return method
    families: dict[str, list[str]] = {}
    for set_name, result in sets.items():
        families.setdefault(result.family or set_name, []).append(set_name)
    if method is not None:
        owner = owner_of(method)
        family = owner.name if owner is not None else method
        if family not in families:
            raise ValueError(f"no score set of method {method!r} in the judgments (they give: {available})")
    elif len(families) > 1:
        raise ValueError(
            f"judgments of several methods ({', '.join(families)}); choose one (method=... / --method, "
            "or a score set with --set)"
        )
    elif not families:
        raise ValueError("the judgments give no score set")
    else:
        family = next(iter(families))
    names = families[family]
    return next((n for n in names if sets[n].primary), names[0])


def judgments_to_scores(judgments: Iterable[Any], method: str, **options: Any) -> AggregatedScores:
    """Document scores ``{qid: {docid: score}}`` of one method or score set, from its records.

    ``method`` is a judging method (``umbrela``, ``exam``, ``nuggets``, ``pairwise``), a record
    method (a custom judge's own name), or a set name (``exam-graded-mean``,
    ``nuggets-vital-strict``); ``options`` go to the owning method's scorer (e.g. ``score``,
    ``questions`` and ``min_rating`` for EXAM, ``nuggets`` for nuggets, ``ties`` and
    ``lengths`` for pairwise, ``on_failure`` for all). Records of several methods mixed raise
    ValueError.
    """
    owner = _owner_of_name(method)
    if owner is not None:
        return owner.scores_for(method, list(judgments), **options)
    return shape_scores(method, list(judgments), **options)


def _owner_of_name(name: str) -> type[Judge] | None:
    """The judge class that answers for ``name``: the judge of that name when it scores its own
    records, the owner of that record method, or the one whose set names include it."""
    owner = owner_of(name)
    if owner is not None:
        return owner
    for cls in registered().values():
        if cls.claims_name(name):
            return cls
    return None


def empty_exclusions(on_failure: str = "exclude") -> Exclusions:
    return Exclusions(policy=on_failure)
