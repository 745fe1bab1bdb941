"""EXAM judge: question generation (or a given bank), grading per (question, passage)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from _judges_harness import run_judge, sample_inputs, sample_questions
from reljudge.errors import InputError
from reljudge.judges.exam.scores import QuestionBank, exam_scores, question_id
from reljudge.judges.registry import get_judge
from reljudge.testing import AutoResponder


def bank_for(qids, per_topic: int = 3) -> QuestionBank:
    questions = sample_questions()
    rows = [(qid, text) for qid in qids for text in list(questions[qid].values())[:per_topic]]
    return QuestionBank.from_rows(rows)


async def test_generates_questions_then_grades_each_passage():
    inputs = sample_inputs(n_topics=2, n_relevant=2, n_other=1)
    judge = get_judge("exam")
    out = await run_judge(judge, inputs)
    questions = out.by_method("exam-question")
    grades = out.by_method("exam")
    assert judge.label_methods == ("exam",)
    for qid in inputs.pool:
        mine = [q for q in questions if q.qid == qid]
        assert 1 <= len(mine) <= 10
        for i, q in enumerate(mine):
            assert q.ok and q.label is None and q.item_id == question_id(qid, q.extra["text"])
            assert q.extra["index"] == i and q.provenance.prompt_id == "exam/question-generation"
        # usage of the one generation call is counted once
        assert sum(q.provenance.usage.calls for q in mine) == 1
        ids = {q.item_id for q in mine}
        mine_grades = [g for g in grades if g.qid == qid]
        assert {(g.docid, g.item_id) for g in mine_grades} == {(d, i) for d in inputs.pool[qid] for i in ids}
    assert out.calls == 2 + len(grades)
    assert all(g.ok and g.label in (0, 1) and g.parse in ("answer", "unanswerable") for g in grades)
    assert {g.label for g in grades} == {0, 1}
    # the generation prompt saw the query alone, the grading prompt question + passage
    assert sum("Break the query" in p for p in out.prompts) == 2
    result = exam_scores(grades, "binary")
    assert set(result.scores) == set(inputs.pool)


async def test_question_bank_means_no_generation_calls():
    inputs = sample_inputs(n_topics=2, n_relevant=1, n_other=1)
    bank = bank_for(list(inputs.pool))
    inputs = replace(inputs, resources={"question_bank": bank})
    judge = get_judge("exam", mode="graded")
    est = judge.estimate(inputs)
    out = await run_judge(judge, inputs)
    assert not any("Break the query" in p for p in out.prompts)
    assert out.by_method("exam-question") == []
    grades = out.by_method("exam")
    assert out.calls == len(grades) == 2 * 2 * 3 == est.calls
    assert {g.item_id for g in grades} == {q.id for q in bank}
    assert all(g.ok and 0 <= g.label <= 5 and g.provenance.prompt_id == "exam/self-rating" for g in grades)
    assert set(exam_scores(grades, "graded-max", questions=bank).scores) == set(inputs.pool)


async def test_resume_reuses_questions_and_grades():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=1)
    first = await run_judge(get_judge("exam"), inputs)
    again = await run_judge(get_judge("exam"), inputs, existing=first.existing)
    assert again.calls == 0 and again.records == []
    # grades lost, questions kept: grading only, with the same questions
    kept = {k: r for k, r in first.existing.items() if r.method == "exam-question"}
    judge = get_judge("exam")
    regraded = await run_judge(judge, inputs, existing=kept)
    assert not any("Break the query" in p for p in regraded.prompts)
    assert {r.key for r in regraded.records} == {k for k, r in first.existing.items() if r.method == "exam"}


async def test_failed_generation_is_recorded_and_stops_the_topic():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=1)
    auto = AutoResponder()

    def respond(req):
        return "I cannot think of any." if "Break the query" in req.last_user else auto(req)

    out = await run_judge(get_judge("exam"), inputs, respond)
    (rec,) = out.records
    assert rec.method == "exam-question" and rec.status == "unparsed" and rec.label is None
    assert rec.raw == "I cannot think of any." and rec.error
    assert out.calls == 2  # an unreadable answer is asked once more, then recorded
    assert rec.extra["reasked"] == [{"raw": "I cannot think of any.", "parse": rec.parse}]


async def test_empty_passage_is_skipped_and_n_questions_caps():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=1)
    qid = next(iter(inputs.pool))
    inputs = replace(inputs, corpus={**inputs.corpus, inputs.pool[qid][0]: ""})
    out = await run_judge(get_judge("exam", n_questions=2), inputs)
    assert len(out.by_method("exam-question")) == 2
    skipped = [r for r in out.by_method("exam") if r.status == "skipped"]
    assert len(skipped) == 2 and all(r.docid == inputs.pool[qid][0] for r in skipped)
    assert out.calls == 1 + 2


def test_exam_options():
    with pytest.raises(InputError, match="mode"):
        get_judge("exam", mode="fuzzy")
    with pytest.raises(InputError, match="needs graded"):
        get_judge("exam", mode="graded", prompt="exam/answerability")
    with pytest.raises(InputError, match="QuestionBank"):
        get_judge("exam").estimate(sample_inputs(n_topics=1, resources={"question_bank": {"x": []}}))
