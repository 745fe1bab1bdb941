"""EXAM records -> score sets: the passage scores a run's grades give, named like the published
files (``exam-binary``, ``exam-graded-max``, ``exam-graded-mean``).

The scale is ``exam_scale`` when given, else the grades' ``extra["scale"]`` (recorded by the
judge), else read off the labels (any label other than 0 and 1 means graded). The generated
questions (``exam-question`` records) are the question bank when they cover every graded
question; a run given a bank has no question records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from reljudge.aggregation.exclusions import FailurePolicy
from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning
from reljudge.judges.exam.scores import MAX_RATING, Question, QuestionBank, exam_scores

GRADE_METHOD = "exam"
QUESTION_METHOD = "exam-question"
EXAM_SETS: tuple[str, ...] = ("exam-binary", "exam-graded-max", "exam-graded-mean")
#: what each EXAM score means: a passage is relevant when it answers some question (a share or
#: a rating above 0); only the highest self-rating is a grade usable as a gain (the Autograder's
#: graded EXAM qrels label, on its own 0-5 scale); a share or a mean over the questions is not
EXAM_MEANINGS: dict[str, ScoreMeaning] = {
    "exam-binary": ScoreMeaning(
        "share of the topic's questions the passage answers", gains=False, scale=(0, 1), cut=0, strict=True
    ),
    "exam-graded-max": ScoreMeaning(
        f"highest self-rating (0-{MAX_RATING}) over the topic's questions",
        gains=True,
        scale=(0, MAX_RATING),
        cut=0,
        strict=True,
    ),
    "exam-graded-mean": ScoreMeaning(
        f"mean self-rating (0-{MAX_RATING}) over the topic's questions",
        gains=False,
        scale=(0, MAX_RATING),
        cut=0,
        strict=True,
    ),
}
ExamScale = Literal["binary", "graded"]
EXAM_SCALES: tuple[str, ...] = ("binary", "graded")


def _extra(record: Any) -> Mapping[str, Any]:
    extra = getattr(record, "extra", None)
    return extra if isinstance(extra, Mapping) else {}


def exam_sets(
    records: Sequence[Any],
    *,
    exam_scale: ExamScale | None = None,
    question_bank: QuestionBank | None = None,
    on_failure: FailurePolicy = "exclude",
) -> dict[str, AggregatedScores]:
    """The EXAM score sets of ``records`` (grades and questions; others are ignored).

    A passage not graded on every question of its topic -- of ``question_bank`` when given, else
    of the generated questions -- is listed in each set's ``incomplete`` (an interrupted run)."""
    if exam_scale is not None and exam_scale not in EXAM_SCALES:
        raise ValueError(f"exam_scale must be one of {', '.join(EXAM_SCALES)}, not {exam_scale!r}")
    grades = [r for r in records if r.method == GRADE_METHOD and r.docid is not None]
    questions = [r for r in records if r.method == QUESTION_METHOD]
    if not grades:
        return {}
    sets = _exam_sets(grades, questions, exam_scale, on_failure)
    incomplete = set()
    for result in sets.values():
        incomplete |= {(m[0], m[1]) for m in result.exclusions.missing}
    if question_bank is not None:
        incomplete |= _ungraded(grades, question_bank)
    primary = "exam-graded-max" if "exam-graded-max" in sets else "exam-binary"
    for name, result in sets.items():
        result.family = "exam"
        result.primary = name == primary
        result.incomplete = sorted(incomplete)
    return sets


def _ungraded(grades: Sequence[Any], bank: QuestionBank) -> set[tuple[str, str]]:
    """The (qid, docid) of passages lacking a grade for some question of ``bank``."""
    graded: dict[tuple[str, str], set[str]] = {}
    for r in grades:
        if r.item_id:
            graded.setdefault((r.qid, r.docid), set()).add(r.item_id)
    return {doc for doc, items in graded.items() if any(q.id not in items for q in bank[doc[0]])}


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
            meaning=EXAM_MEANINGS[f"exam-{score}"],
        )
    return out
