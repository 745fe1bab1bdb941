"""Every document-level score set the records of a run support, in one call (`score_sets`).

A run's judgments file mixes label records and stage records; `score_sets` sorts them by shape
and method and aggregates each group the way its method defines, naming each set like the
published files (``binary.dl19.qrels``, ``exam-graded-max.dl19.qrels``, ...):

- pointwise records (``docid``, no ``docid_b``, no ``item_id``) of method ``m`` (``binary``,
  ``umbrela``, a custom judge's name, ...): the labels, set ``m``;
- pairwise records (``docid`` and ``docid_b``) of method ``m``: win counts (`count_wins`), set
  ``m``, with the ``ok`` comparisons kept in ``details["preferences"]`` as
  ``(qid, docid, docid_b, label)``;
- EXAM grades (method ``exam``: ``docid`` and ``item_id``), with the ``exam-question`` records
  as the question bank: ``exam-binary`` for 0/1 answerability labels, ``exam-graded-max`` and
  ``exam-graded-mean`` for 0-5 self-ratings. The scale is ``exam_scale`` when given, else the
  grades' ``extra["scale"]`` (recorded by the EXAM judge), else read off the labels (any label
  other than 0 and 1 means graded);
- nugget assignments (method ``nugget-assignment``), against the scored ``nugget`` records: the
  six scores ``nuggets-all``, ``nuggets-all-strict``, ``nuggets-vital``,
  ``nuggets-vital-strict``, ``nuggets-weighted``, ``nuggets-weighted-strict``.

Other stage records (``nugget-creation``, records without a passage) are not labels and are
skipped. A failed record is never a label: each set carries its own `Exclusions`.

Only ``qid``, ``docid``, ``docid_b``, ``item_id``, ``method``, ``label`` and ``status`` are read
from label records (so light views such as `reljudge.io.judgments.LabelView` do); ``extra`` is
read from the stage records and, if present, from EXAM grades.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from reljudge.aggregation.exam import Question, QuestionBank, exam_scores
from reljudge.aggregation.exclusions import Exclusions, FailurePolicy, check_policy
from reljudge.aggregation.nuggets import (
    DEFAULT_TOP_K,
    NUGGET_SCORES,
    EmptyClass,
    Nugget,
    Weighting,
    nugget_scores,
    select_nuggets,
)
from reljudge.aggregation.preferences import TiePolicy, _pair_key, count_wins
from reljudge.aggregation.qrels import AggregatedScores, label_scores

# record methods of the built-in multi-stage judges (reljudge.judges.exam / .nuggets)
EXAM_GRADE = "exam"
EXAM_QUESTION = "exam-question"
NUGGET = "nugget"
NUGGET_ASSIGNMENT = "nugget-assignment"

ExamScale = Literal["binary", "graded"]
EXAM_SCALES: tuple[str, ...] = ("binary", "graded")
RECORDED = "recorded"
TopK = int | None | Literal["recorded"]


def _extra(record: Any) -> Mapping[str, Any]:
    extra = getattr(record, "extra", None)
    return extra if isinstance(extra, Mapping) else {}


def score_sets(
    records: Iterable[Any],
    *,
    exam_scale: ExamScale | None = None,
    top_k: TopK = RECORDED,
    ties: TiePolicy = "none",
    lengths: Mapping[str, int] | None = None,
    empty_class: EmptyClass = "undefined",
    weighted: Weighting = "trec",
    on_failure: FailurePolicy = "exclude",
) -> dict[str, AggregatedScores]:
    """Every score set the records support, ``{name: AggregatedScores}`` (see module doc).

    Sets come in the order their method first appears among the records. `top_k` chooses the
    nuggets passages were assessed against: ``"recorded"`` (default) takes the nugget records'
    ``extra["selected"]`` flags (the top 20 when none is recorded), an int or None re-selects
    (`select_nuggets`); any other scored nugget with assignments is added. `ties` and `lengths`
    go to `count_wins`, `empty_class` and `weighted` to `nugget_scores`. ``on_failure="zero"``
    counts a failed label record as the lowest label (see `Exclusions`); pairwise records refuse
    it (a failed comparison gives no win).

    Raises ValueError for records no method here can aggregate (an ``item_id`` on a passage
    judged by an unknown method), a method whose records mix shapes, contradicting labels, or an
    EXAM scale that contradicts the recorded one.
    """
    check_policy(on_failure)
    if exam_scale is not None and exam_scale not in EXAM_SCALES:
        raise ValueError(f"exam_scale must be one of {', '.join(EXAM_SCALES)}, not {exam_scale!r}")
    if top_k != RECORDED and top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a positive integer, None or 'recorded', got {top_k!r}")

    groups: dict[str, tuple[str, list[Any]]] = {}  # method -> (kind, records), first-seen order
    questions: list[Any] = []
    nuggets: list[Any] = []
    for r in records:
        if r.docid is None:
            if r.method == EXAM_QUESTION:
                questions.append(r)
            elif r.method == NUGGET:
                nuggets.append(r)
            continue  # other stage records (nugget-creation, topic-level failures)
        if r.docid_b is not None:
            kind = "pairwise"
        elif r.item_id is None:
            kind = "pointwise"
        elif r.method in (EXAM_GRADE, NUGGET_ASSIGNMENT):
            kind = r.method
        else:
            raise ValueError(
                f"records of method {r.method!r} grade items (item_id) of passages; only "
                f"{EXAM_GRADE!r} and {NUGGET_ASSIGNMENT!r} records can be aggregated that way"
            )
        group = groups.setdefault(r.method, (kind, []))
        if group[0] != kind:
            raise ValueError(f"records of method {r.method!r} mix {group[0]} and {kind} judgments")
        group[1].append(r)

    out: dict[str, AggregatedScores] = {}

    def add(name: str, result: AggregatedScores) -> None:
        if name in out:
            raise ValueError(f"two score sets would be named {name!r}; rename the method of one judge")
        out[name] = result

    for method, (kind, group) in groups.items():
        if kind == "pointwise":
            add(method, label_scores(group, on_failure=on_failure))
        elif kind == "pairwise":
            if on_failure != "exclude":
                raise ValueError(
                    "a failed comparison gives no win; on_failure must be 'exclude' for pairwise"
                )
            prefs = count_wins(group, ties=ties, lengths=lengths)
            add(
                method,
                AggregatedScores(
                    method=method,
                    scores=prefs.scores,
                    exclusions=prefs.exclusions,
                    details={
                        "never_won": prefs.never_won,
                        "ties": ties,
                        "preferences": _preferences(group),
                    },
                ),
            )
        elif kind == EXAM_GRADE:
            for name, result in _exam_sets(group, questions, exam_scale, on_failure).items():
                add(name, result)
        else:
            sets = _nugget_sets(
                group, nuggets, top_k, empty_class=empty_class, weighted=weighted, on_failure=on_failure
            )
            for name, result in sets.items():
                add(name, result)
    return out


EXAM_SETS: tuple[str, ...] = ("exam-binary", "exam-graded-max", "exam-graded-mean")
NUGGET_SETS: tuple[str, ...] = tuple(f"nuggets-{score}" for score in NUGGET_SCORES)


def _family(name: str) -> str:
    """The method a set comes from: ``exam`` for EXAM sets, ``nuggets`` for nugget sets, else
    the set's own name."""
    if name in EXAM_SETS:
        return "exam"
    if name in NUGGET_SETS:
        return "nuggets"
    return name


def _primary_of(names: list[str]) -> str:
    for primary in ("exam-graded-max", "exam-binary", "nuggets-all"):
        if primary in names:
            return primary
    return names[0]


def select_set(
    sets: Mapping[str, AggregatedScores], *, name: str | None = None, method: str | None = None
) -> str:
    """The name of one set of `score_sets`: ``name`` when given; else the primary set of
    ``method`` (or of the only method the sets come from): ``exam-graded-max`` for graded EXAM
    grades, ``exam-binary`` for binary ones, ``nuggets-all`` for nugget assignments, the labels
    or win counts for any other method. ``method`` may also name a set (``exam-graded-mean``).

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
    for set_name in sets:
        families.setdefault(_family(set_name), []).append(set_name)
    if method is not None:
        family = {NUGGET_ASSIGNMENT: "nuggets"}.get(method, method)
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
    return _primary_of(families[family])


def _preferences(group: list[Any]) -> list[tuple[str, str, str, int]]:
    """The ``ok`` comparisons, one per unordered pair (as `count_wins` counted them)."""
    seen: set[tuple[str, str, str]] = set()
    prefs: list[tuple[str, str, str, int]] = []
    for r in group:
        if r.status != "ok" or r.label is None:
            continue
        k = _pair_key(r)
        if k not in seen:
            seen.add(k)
            prefs.append((r.qid, r.docid, r.docid_b, int(r.label)))
    return prefs


# -- EXAM --------------------------------------------------------------------------------------


def _exam_scale(grades: list[Any], given: ExamScale | None) -> tuple[str, str]:
    recorded = {_extra(r).get("scale") for r in grades if r.status == "ok"} - {None}
    if len(recorded) > 1:
        raise ValueError(f"EXAM grades on several scales: {', '.join(sorted(map(str, recorded)))}")
    if recorded and not recorded <= set(EXAM_SCALES):
        raise ValueError(f"unknown EXAM scale {next(iter(recorded))!r} recorded")
    if given is not None:
        if recorded and given not in recorded:
            raise ValueError(f"exam_scale={given!r} contradicts the recorded scale {next(iter(recorded))!r}")
        return given, "argument"
    if recorded:
        return str(next(iter(recorded))), "records"
    graded = any(r.label not in (0, 1) for r in grades if r.status == "ok" and r.label is not None)
    return ("graded" if graded else "binary"), "labels"


def _question_bank(questions: list[Any], grades: list[Any]) -> QuestionBank | None:
    """The generated questions, when they cover every graded question (a run given a question
    bank has no question records)."""
    found: dict[str, tuple[str, int, Question]] = {}
    for r in questions:
        text = _extra(r).get("text")
        if r.status != "ok" or not r.item_id or not isinstance(text, str) or r.item_id in found:
            continue
        found[r.item_id] = (
            r.qid,
            int(_extra(r).get("index", 0)),
            Question(id=r.item_id, qid=r.qid, text=text),
        )
    if not found or any(r.item_id not in found for r in grades):
        return None
    return QuestionBank(q for _, _, q in sorted(found.values(), key=lambda x: (x[0], x[1])))


def _exam_sets(
    grades: list[Any], questions: list[Any], given: ExamScale | None, on_failure: FailurePolicy = "exclude"
) -> dict[str, AggregatedScores]:
    scale, how = _exam_scale(grades, given)
    bank = _question_bank(questions, grades)
    chosen = ("binary",) if scale == "binary" else ("graded-max", "graded-mean")
    out: dict[str, AggregatedScores] = {}
    for score in chosen:
        result = exam_scores(grades, score, questions=bank, on_failure=on_failure)  # type: ignore[arg-type]
        out[f"exam-{score}"] = AggregatedScores(
            method=f"exam-{score}",
            scores=result.scores,
            exclusions=result.exclusions,
            details={"score": score, "scale": scale, "scale_from": how, "question_bank": bank is not None},
        )
    return out


# -- nuggets -----------------------------------------------------------------------------------


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
        selected = select_nuggets(bank, DEFAULT_TOP_K if top_k == RECORDED else top_k)  # type: ignore[arg-type]
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
        )
    return out


def _for_score(exclusions: Exclusions, score: str) -> Exclusions:
    """A copy for one nugget score: the "no vital nugget" entries concern the vital scores only."""
    own = copy.deepcopy(exclusions)
    if not score.startswith("vital"):
        own.unscored = [u for u in own.unscored if not u[2].startswith("vital:")]
    return own
