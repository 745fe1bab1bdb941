"""EXAM passage scores and the question bank."""

from __future__ import annotations

import hashlib

import pytest

from reljudge.judges.exam.scores import QuestionBank, exam_scores, question_id
from reljudge.records import Judgment

QUESTIONS = [("156493", f"question {k}?") for k in range(1, 11)] + [("2", "Why?"), ("2", "How?")]
BANK = QuestionBank.from_rows(QUESTIONS)
QIDS = [q.id for q in BANK["156493"]]


def G(docid: str, item: str, label: int | None, qid: str = "156493", status: str = "ok") -> Judgment:
    return Judgment(qid=qid, docid=docid, item_id=item, method="exam", label=label, status=status)


# the reference's verified example (topic 156493, doc 1034435): ratings -> max 3, mean 1.7
RATINGS = (3, 2, 2, 0, 2, 2, 0, 2, 2, 2)
ANSWERABLE = (1, 0, 1, 0, 0, 1, 0, 0, 1, 0)  # 4 of 10 -> 0.4


def test_question_ids_and_bank():
    assert question_id("156493", "Why?") == "156493/" + hashlib.md5(b"Why?").hexdigest()
    assert BANK.qids == ["156493", "2"] and len(BANK) == 12
    assert [q.text for q in BANK["2"]] == ["Why?", "How?"]
    assert QuestionBank.from_rows([("2", "  Why? \n")])["2"][0].id == question_id("2", "Why?")
    assert QuestionBank.from_dict(BANK.to_dict()) == BANK
    assert QuestionBank.from_dict({"2": ["Why?"]})["2"][0].id == question_id("2", "Why?")
    with pytest.raises(ValueError, match="does not match"):
        QuestionBank.from_dict({"2": [{"id": "2/abc", "text": "Why?"}]})
    with pytest.raises(ValueError, match="row 2"):
        QuestionBank.from_rows([("2", "Why?"), ("2", "Why?")])
    with pytest.raises(ValueError, match="row 1"):
        QuestionBank.from_rows([("2", " ")])


def test_three_scores_hand_computed():
    ratings = [G("1034435", i, r) for i, r in zip(QIDS, RATINGS, strict=True)]
    assert exam_scores(ratings, "graded-max").scores == {"156493": {"1034435": 3.0}}
    assert exam_scores(ratings, "graded-mean").scores["156493"]["1034435"] == pytest.approx(1.7)
    binary = [G("1034435", i, a) for i, a in zip(QIDS, ANSWERABLE, strict=True)]
    assert exam_scores(binary, "binary", questions=BANK).scores["156493"]["1034435"] == pytest.approx(0.4)
    # answerability derived from self-ratings: ratings >= 2 -> 8 of 10
    derived = exam_scores(ratings, "binary", min_rating=2).scores["156493"]["1034435"]
    assert derived == pytest.approx(0.8)


def test_binary_rejects_ratings_without_threshold_and_bad_ratings():
    with pytest.raises(ValueError, match="min_rating"):
        exam_scores([G("d", QIDS[0], 3)], "binary")
    with pytest.raises(ValueError, match="0-5"):
        exam_scores([G("d", QIDS[0], 7)], "graded-max")
    with pytest.raises(ValueError, match="unknown EXAM score"):
        exam_scores([], "cover")  # type: ignore[arg-type]


def test_failed_and_missing_grades_are_excluded_and_reported():
    grades = [G("d", QIDS[0], 4), G("d", QIDS[1], 2), G("d", QIDS[2], None, status="unparsed")]
    res = exam_scores(grades, "graded-mean", questions=BANK)
    assert res.scores["156493"]["d"] == pytest.approx(3.0)  # (4 + 2) / 2, not / 3 or / 10
    assert res.exclusions.failed == {"unparsed": 1}
    assert len(res.exclusions.missing) == 7
    assert "1 failed (unparsed 1) excluded" in res.exclusions.summary()
    zero = exam_scores(grades, "graded-mean", questions=BANK, on_failure="zero")
    assert zero.scores["156493"]["d"] == pytest.approx(6 / 10)  # the whole bank is the denominator
    assert zero.exclusions.zeroed == 1
    # without a bank, only the passage's own records count
    assert exam_scores(grades, "graded-max").scores["156493"]["d"] == 4.0


def test_passage_with_only_failures_gets_no_score():
    res = exam_scores([G("d", QIDS[0], None, status="api_error")], "graded-max")
    assert res.scores == {}
    assert res.exclusions.unscored == [("156493", "d", "no valid grade")]


def test_question_outside_bank_and_incomplete_record():
    with pytest.raises(ValueError, match="not in the question bank"):
        exam_scores([G("d", "156493/unknown", 1)], "binary", questions=BANK)
    with pytest.raises(ValueError, match="needs docid and item_id"):
        exam_scores([Judgment(qid="1", docid="d", method="exam", label=1)], "binary")
