"""EXAM: passage scores from per-question grades (Sander & Dietz 2021; Farzi & Dietz 2024).

An EXAM grading record is a `Judgment` with ``qid``, ``docid`` (the passage), ``item_id`` (the
question id ``qid/md5(text)``) and a ``label``: 0/1 for the "answerable?" prompt, or the 0-5
self-rating. Three passage scores, as in the published gpt-4o files of Arabzadeh & Clarke
(SIGIR 2025):

- ``binary``: mean over the topic's questions of the 0/1 answerable label, i.e. the fraction
  of questions the passage answers (``exam-binary``). With ``min_rating`` the 0/1 label is
  derived from a self-rating instead (answerable = rating >= min_rating).
- ``graded-max``: the maximum self-rating (0-5) over the questions (``exam-graded-max``; the
  Autograder's graded EXAM qrels label).
- ``graded-mean``: the mean self-rating (0-5) over the questions (``exam-graded-mean``).

Denominators are the questions with a valid grade for that passage. Failed grades and, when a
`QuestionBank` is given, bank questions never graded for the passage are left out and reported
in `Exclusions` (``on_failure="zero"`` counts both as 0 instead, i.e. the denominator is the
whole bank). A passage with no valid grade at all gets no score and is listed as unscored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from reljudge.aggregation.exclusions import Exclusions, FailurePolicy, check_policy, collect
from reljudge.records import Judgment

ExamScore = Literal["binary", "graded-max", "graded-mean"]
EXAM_SCORES: tuple[str, ...] = ("binary", "graded-max", "graded-mean")
MAX_RATING = 5


def question_id(qid: str, text: str) -> str:
    """Content-addressed question id ``qid/md5(text)`` (the Autograder Workbench convention).

    The text is hashed exactly as given (UTF-8); `QuestionBank.from_rows` strips surrounding
    whitespace before hashing.
    """
    return f"{qid}/{hashlib.md5(text.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class Question:
    id: str
    qid: str
    text: str


class QuestionBank:
    """The exam questions of each topic: ``qid -> [Question, ...]`` in their original order."""

    def __init__(self, questions: Iterable[Question] = ()):
        self._by_qid: dict[str, list[Question]] = {}
        self._by_id: dict[str, Question] = {}
        for q in questions:
            if q.id in self._by_id:
                raise ValueError(f"duplicate question {q.id} for topic {q.qid}: {q.text!r}")
            if not q.id.startswith(f"{q.qid}/"):
                raise ValueError(f"question id {q.id!r} does not belong to topic {q.qid!r}")
            self._by_id[q.id] = q
            self._by_qid.setdefault(q.qid, []).append(q)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str]]) -> QuestionBank:
        """Build a bank from ``(qid, question text)`` pairs; ids are computed from the text.

        The text is stripped; an empty text or the same question twice for a topic raises
        ValueError naming the row (1-based).
        """
        questions: list[Question] = []
        seen: set[str] = set()
        for n, (qid, text) in enumerate(rows, start=1):
            text = text.strip()
            qid = qid.strip()
            if not qid or not text:
                raise ValueError(f"row {n}: empty topic id or question text")
            qid_text = question_id(qid, text)
            if qid_text in seen:
                raise ValueError(f"row {n}: question repeated for topic {qid}: {text!r}")
            seen.add(qid_text)
            questions.append(Question(id=qid_text, qid=qid, text=text))
        return cls(questions)

    @classmethod
    def from_dict(cls, data: Mapping[str, Iterable[Mapping[str, str] | str]]) -> QuestionBank:
        """Inverse of `to_dict`. Entries may be plain strings (ids are then computed);
        given ids must match the text's hash."""
        questions: list[Question] = []
        for qid, items in data.items():
            for item in items:
                if isinstance(item, str):
                    text, given = item, None
                else:
                    text, given = item["text"], item.get("id")
                computed = question_id(qid, text)
                if given is not None and given != computed:
                    raise ValueError(f"question id {given!r} does not match its text (expected {computed})")
                questions.append(Question(id=computed, qid=qid, text=text))
        return cls(questions)

    def to_dict(self) -> dict[str, list[dict[str, str]]]:
        return {qid: [{"id": q.id, "text": q.text} for q in qs] for qid, qs in self._by_qid.items()}

    @property
    def qids(self) -> list[str]:
        return list(self._by_qid)

    def __getitem__(self, qid: str) -> list[Question]:
        return list(self._by_qid.get(qid, []))

    def question(self, question_id: str) -> Question:
        return self._by_id[question_id]

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._by_id

    def __iter__(self) -> Iterator[Question]:
        for qs in self._by_qid.values():
            yield from qs

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuestionBank) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"QuestionBank({len(self._by_qid)} topics, {len(self)} questions)"


@dataclass
class ExamResult:
    """Passage scores ``{qid: {docid: score}}`` of one EXAM score, plus what was left out."""

    score: str
    scores: dict[str, dict[str, float]]
    exclusions: Exclusions


def _item_key(j: Judgment) -> tuple[str, str, str]:
    if j.docid is None or j.item_id is None:
        raise ValueError(
            f"EXAM grading record for topic {j.qid} needs docid and item_id "
            f"(got docid={j.docid!r}, item_id={j.item_id!r})"
        )
    return (j.qid, j.docid, j.item_id)


def _grade_value(j: Judgment, score: str, min_rating: int | None) -> float:
    label = j.label
    assert label is not None
    if score == "binary" and min_rating is None:
        if label not in (0, 1):
            raise ValueError(
                f"exam binary needs 0/1 labels, got {label!r} for {_item_key(j)}; "
                "pass min_rating to derive answerability from a 0-5 self-rating"
            )
        return float(label)
    if label != int(label) or not 0 <= label <= MAX_RATING:
        raise ValueError(
            f"an EXAM self-rating is an integer 0-{MAX_RATING}, got {label!r} for {_item_key(j)}"
        )
    if score == "binary":
        assert min_rating is not None
        return 1.0 if label >= min_rating else 0.0
    return float(label)


def exam_scores(
    judgments: Iterable[Judgment],
    score: ExamScore = "binary",
    *,
    questions: QuestionBank | None = None,
    min_rating: int | None = None,
    on_failure: FailurePolicy = "exclude",
) -> ExamResult:
    """Aggregate per-question grades into one EXAM score per passage (see module doc).

    `questions`, when given, fixes the expected questions of each topic: a grade for a
    question outside the bank raises ValueError, and bank questions never graded for a passage
    are reported as missing (or count 0 with ``on_failure="zero"``). Without a bank, the
    questions of a passage are those it has records for.
    """
    if score not in EXAM_SCORES:
        raise ValueError(f"unknown EXAM score {score!r}; choose one of {', '.join(EXAM_SCORES)}")
    check_policy(on_failure)
    if min_rating is not None and not 0 < min_rating <= MAX_RATING:
        raise ValueError(f"min_rating must be 1-{MAX_RATING}, got {min_rating}")
    if min_rating is not None and score != "binary":
        raise ValueError("min_rating only applies to the binary EXAM score")

    exclusions = Exclusions(policy=on_failure)
    ok, failed = collect(judgments, _item_key, exclusions)

    # (qid, docid) -> {item_id: value or None (failed)}
    grades: dict[tuple[str, str], dict[str, float | None]] = {}
    for (qid, docid, item), j in ok.items():
        if questions is not None and item not in questions:
            raise ValueError(f"question {item} (topic {qid}) is not in the question bank")
        grades.setdefault((qid, docid), {})[item] = _grade_value(j, score, min_rating)
    for qid, docid, item in failed:
        if questions is not None and item not in questions:
            raise ValueError(f"question {item} (topic {qid}) is not in the question bank")
        grades.setdefault((qid, docid), {})[item] = None

    scores: dict[str, dict[str, float]] = {}
    for (qid, docid), by_item in grades.items():
        values: list[float] = []
        for value in by_item.values():
            if value is not None:
                values.append(value)
            elif on_failure == "zero":
                values.append(0.0)
                exclusions.zeroed += 1
        if questions is not None:
            for q in questions[qid]:
                if q.id not in by_item:
                    exclusions.missing.append((qid, docid, q.id))
                    if on_failure == "zero":
                        values.append(0.0)
        if not values:
            exclusions.unscored.append((qid, docid, "no valid grade"))
            continue
        if score == "graded-max":
            value = max(values)
        else:
            value = sum(values) / len(values)
        scores.setdefault(qid, {})[docid] = value
    return ExamResult(score=score, scores=scores, exclusions=exclusions)
